// Package pipeline runs zonal's training and prediction as Apache Beam
// pipelines, so that data spread over many files and machines are fitted by
// an existing engine (prism in-process or as a job server, Flink, Spark,
// Dataflow) into an ordinary zonal model file.
//
// The settings are the library's: Config holds an estimator.Options, and
// estimator.NewPlan, on the training rows' shape (rows, columns, density) as
// the first passes measure it, decides what they leave open (method
// defaults, centre count, standardization, kernel, memory check); the
// pipelines keep only the distributed mechanics, and refuse by name what
// they cannot distribute (Config.Check).
//
// Input (ReadBlocks and every pass of Fit): files matched by a glob, streamed
// line by line and parsed by zonal's LIBSVM and CSV readers one Block of
// rows (CSR, padded to the data set's dimension when used) at a time. The
// global row order is the files sorted by path, rows in file order; it
// makes the centres the ones solvers.FitFalkon draws for the same rows and
// seed (solvers.UniformCenters), and Config.Split the rows `zonal fit
// -split` holds out (dataset.Split over that order).
//
// Training (Fit), after a pass that counts the rows of every file (the
// Layout) and one that sums the training rows' Summary (dimension, labels,
// stored entries, column moments):
//
//   - FALKON's Nystrom system in one pass: with the M centres C a side
//     input, the files are dealt into Config.Workers groups; one worker per
//     group sums G = K_nM^T K_nM, B = K_nM^T Y, S = K_nM^T 1 and 1^T Y over
//     its files' blocks into one accumulator, a combiner adds the groups'
//     sums, and one worker solves (G + lambda n K_MM) alpha = B - S mean^T,
//     mean = 1^T Y / n, through T^T T = K_MM:
//     (T^-T G T^-1 + lambda n I) beta = T^-T (B - S mean^T),
//     alpha = T^-1 beta. That is the system FALKON solves by preconditioned
//     CG, solved directly; the model is FALKON-kind. The partial sums are
//     one per group, not one per bundle: their count, and the memory they
//     take, do not depend on how the runner bundles the work.
//   - Ridge on random Fourier features: the same sums with Z for K_nM and
//     (G + lambda n I) W = B - S mean^T.
//   - ParK: centroids by the paper's farthest-point rule in the RKHS on a
//     sample (zonal fit's -partition greedy, its default; kernel k-means
//     is not distributed yet),
//     rows assigned to the nearest centroid on the workers, grouped by cell,
//     one FALKON per cell, gathered into a ParK model.
//
// With Config.Split the held-out rows are predicted by the written model and
// their Metrics written to HeldOutPath(Config.Model).
//
// Prediction (Predict): the model file is a side input, decoded once per
// worker process; labels are written per input file.
//
// Counters (namespace "zonal"): rows_read, rows_trained, lines_skipped, and
// the milliseconds spent reading in the first pass (read_ms), computing
// kernel or feature blocks (kernel_ms), summing Gram matrices (gram_ms),
// solving (solve_ms) and fitting ParK cells (cells_ms), summed over workers.
package pipeline
