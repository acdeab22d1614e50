package dataset_test

import (
	"errors"
	"fmt"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
)

func ExampleReadLIBSVM() {
	in := `# label index:value ...
1 1:0.5 3:2
-1 2:1
`
	d, err := dataset.ReadLIBSVM(strings.NewReader(in), dataset.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(d.Y)
	fmt.Println(mat.Formatted(d.X))
	fmt.Println("nnz:", d.Sparse.NNZ())
	// Output:
	// [1 -1]
	// ⎡0.5    0    2⎤
	// ⎣  0    1    0⎦
	// nnz: 3
}

// A test file for a model with d = 5 features: pad to 5 columns (LIBSVM
// omits trailing zeros) and refuse indices above 5.
func ExampleOptions_modelDimension() {
	opts := dataset.Options{MinCols: 5, MaxCols: 5}
	d, err := dataset.ReadLIBSVM(strings.NewReader("0 2:1\n"), opts)
	if err != nil {
		panic(err)
	}
	fmt.Println(d.X.RawRowView(0))

	_, err = dataset.ReadLIBSVM(strings.NewReader("0 2:1\n1 6:1\n"), opts)
	fmt.Println(errors.Is(err, zonal.ErrRange), err)
	// Output:
	// [0 1 0 0 0]
	// true dataset: line 2: index "6" in "6:1" exceeds MaxCols = 5
}

func ExampleReadCSV() {
	in := `height,weight,y
1.70,65,0
1.82,80,1
`
	d, err := dataset.ReadCSV(strings.NewReader(in), dataset.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(d.Names, d.TargetName, d.Y)
	fmt.Println(mat.Formatted(d.X))

	// Malformed input is an error naming the line and the problem.
	_, err = dataset.ReadCSV(strings.NewReader("y,a\n1,2\n3,x\n"), dataset.Options{})
	fmt.Println(err)
	// Output:
	// [height weight] y [0 1]
	// ⎡ 1.7    65⎤
	// ⎣1.82    80⎦
	// dataset: line 3: bad number "x" in column "a"
}

// The usual preparation: split the rows, fit the scaler on the training
// part only, apply it to both parts.
func ExampleStandardizer_trainTest() {
	d, err := dataset.Digits()
	if err != nil {
		panic(err)
	}
	trainRows, testRows := dataset.Split(len(d.Y), 0.8, 42)
	train, _ := d.Subset(trainRows)
	test, _ := d.Subset(testRows)
	s, err := dataset.FitStandardizer(train.X)
	if err != nil {
		panic(err)
	}
	if err := s.Apply(train.X); err != nil {
		panic(err)
	}
	if err := s.Apply(test.X); err != nil {
		panic(err)
	}
	fmt.Println(len(train.Y), len(test.Y), len(s.Mean))
	// Output:
	// 1438 359 64
}

func ExampleKFold() {
	folds, err := dataset.KFold(10, 3, 7)
	if err != nil {
		panic(err)
	}
	for _, f := range folds {
		fmt.Println(len(f.Train), len(f.Test))
	}
	// Output:
	// 7 3
	// 7 3
	// 6 4
}

func ExampleNewCSRFromDense() {
	a := mat.NewDense(2, 3, []float64{0, 2, 0, 1, 0, 3})
	s := dataset.NewCSRFromDense(a)
	for i := 0; i < s.Rows; i++ {
		cols, vals := s.Row(i)
		fmt.Println(i, cols, vals)
	}
	dot, _ := s.RowDot(1, []float64{1, 1, 1})
	fmt.Println(s.NNZ(), dot)
	// Output:
	// 0 [1] [2]
	// 1 [0 2] [1 3]
	// 3 4
}
