// Package pipeline runs zonal's training and prediction as Apache Beam
// pipelines, so that data spread over many files and machines are fitted by
// an existing engine (prism in-process or as a job server, Flink, Spark,
// Dataflow) into an ordinary zonal model file.
//
// Input (ReadBlocks): files matched by a glob, parsed whole by zonal's
// LIBSVM and CSV readers into Blocks of rows (CSR, padded to the data set's
// dimension when used). The global row order is the files sorted by path,
// rows in file order; it makes the sampled centres the ones solvers.FitFalkon
// draws for the same rows and seed.
//
// Training (Fit), after a first pass that sums a Summary (rows per file,
// dimension, labels, column moments):
//
//   - Nystrom KRR in one pass: with the M centres C a side input, every
//     bundle sums G = K_nM^T K_nM, B = K_nM^T Y, S = K_nM^T 1 and 1^T Y over
//     its blocks; a combiner adds the bundles' sums, and one worker solves
//     (G + lambda n K_MM) alpha = B - S mean^T, mean = 1^T Y / n, through
//     T^T T = K_MM: (T^-T G T^-1 + lambda n I) beta = T^-T (B - S mean^T),
//     alpha = T^-1 beta. That is the system FALKON solves by preconditioned
//     CG, solved directly; the model is FALKON-kind.
//   - Ridge on random Fourier features: the same sums with Z for K_nM and
//     (G + lambda n I) W = B - S mean^T.
//   - ParK: centroids by the paper's farthest-point rule in the RKHS on a
//     sample (zonal fit's -partition greedy; its default, kernel k-means,
//     is not distributed yet),
//     rows assigned to the nearest centroid on the workers, grouped by cell,
//     one FALKON per cell, gathered into a ParK model.
//
// Prediction (Predict): the model file is a side input, decoded once per
// worker process; labels are written per input file.
//
// Counters (namespace "zonal"): rows_read, rows_trained, lines_skipped, and
// the milliseconds spent reading (read_ms), computing kernel or feature
// blocks (kernel_ms), summing Gram matrices (gram_ms), solving (solve_ms)
// and fitting ParK cells (cells_ms), summed over workers.
package pipeline
