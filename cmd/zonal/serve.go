package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"

	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/serve"
	"github.com/zonal-ml/zonal/solvers"
)

const serveSynopsis = "-model FILE [-addr 127.0.0.1:8080] [-grpc-addr ADDR] [-name NAME] [-max-body 8MiB] [-max-rows N] [-max-batch 64] " +
	"[-batch-delay 1ms] [-workers N] [-max-in-flight N] [-reload-endpoint] [-read-timeout 30s] [-write-timeout 30s] " +
	"[-idle-timeout 2m] [-shutdown-timeout 15s]"

func init() {
	addCommand(command{name: "serve", summary: "serve a model file over HTTP (v1 JSON, Open Inference Protocol v2, /metrics); SIGHUP reloads",
		run: func(_ context.Context, e *env, args []string) error { return serveUntil(args, e.stdout, e.stderr, nil) }, ownSignals: true})
}

// serveUntil runs `zonal serve`; sigs delivers SIGHUP (reload) and
// SIGTERM/SIGINT (drain and stop). nil = the process's signals.
func serveUntil(args []string, stdout, stderr io.Writer, sigs chan os.Signal) error {
	fs := newFlagSet("serve", serveSynopsis, stderr)
	modelPath := fs.String("model", "", "model file written by `zonal fit -model` (reread on SIGHUP and POST /v1/reload)")
	addr := fs.String("addr", "127.0.0.1:8080", "listen address (host:port; port 0 picks a free one)")
	grpcAddr := fs.String("grpc-addr", "", "also serve the Open Inference Protocol v2 gRPC service (inference.GRPCInferenceService) on this address (\"\" = no gRPC)")
	name := fs.String("name", "", "model name in /v2/models/{name} and the metrics (default: the file name without extension)")
	maxBody := fs.String("max-body", "8MiB", "largest request body (413 above it), e.g. 512K, 8MiB")
	maxRows := fs.Int("max-rows", serve.DefaultMaxRows, "most rows per request (413 above it)")
	maxBatch := fs.Int("max-batch", serve.DefaultMaxBatch, "most single-row requests merged into one block prediction (1 = no batching)")
	batchDelay := fs.Duration("batch-delay", serve.DefaultBatchDelay, "longest a single-row request waits for others to join its block (only while others' rows are being decoded)")
	workers := fs.Int("workers", 0, "block predictions running at once (0 = GOMAXPROCS)")
	maxInFlight := fs.Int("max-in-flight", 0, "prediction requests admitted at once, more get 503 + Retry-After (0 = 256 * workers)")
	reloadEndpoint := fs.Bool("reload-endpoint", false, "enable POST /v1/reload (reload the -model file)")
	readTimeout := fs.Duration("read-timeout", 30*time.Second, "longest time to read a request (headers: at most 5s)")
	writeTimeout := fs.Duration("write-timeout", 30*time.Second, "longest time from the end of the request headers to the end of the answer")
	idleTimeout := fs.Duration("idle-timeout", 2*time.Minute, "longest an idle keep-alive connection stays open")
	shutdownTimeout := fs.Duration("shutdown-timeout", 15*time.Second, "on SIGTERM/SIGINT, how long in-flight requests may take to finish")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *modelPath == "" {
		return usageError{errors.New("-model is required")}
	}
	body, err := parseBytes(*maxBody)
	if err != nil {
		return usageError{fmt.Errorf("bad -max-body %q (want e.g. 512K, 8MiB)", *maxBody)}
	}
	// Checked in a fixed order (not a map's), so that with several bad
	// flags the message names the same one on every run.
	for _, f := range []struct {
		name string
		v    int
	}{{"-max-rows", *maxRows}, {"-max-batch", *maxBatch}, {"-workers", *workers + 1}, {"-max-in-flight", *maxInFlight + 1}} {
		if f.v < 1 {
			return usageError{fmt.Errorf("%s must be positive", f.name)}
		}
	}
	for _, f := range []struct {
		name string
		v    time.Duration
	}{{"-read-timeout", *readTimeout}, {"-write-timeout", *writeTimeout}, {"-idle-timeout", *idleTimeout}, {"-shutdown-timeout", *shutdownTimeout}} {
		if f.v <= 0 {
			return usageError{fmt.Errorf("%s must be positive, got %v", f.name, f.v)}
		}
	}
	if *batchDelay < 0 {
		return usageError{fmt.Errorf("-batch-delay must not be negative, got %v", *batchDelay)}
	}
	if *name == "" {
		*name = strings.TrimSuffix(filepath.Base(*modelPath), filepath.Ext(*modelPath))
	}

	b, err := backend.FromEnv()
	if err != nil {
		return usageError{err}
	}
	f, err := os.Open(*modelPath)
	if err != nil {
		return err
	}
	pipe, err := solvers.Load(f, solvers.Options{Backend: b})
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", *modelPath, err)
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	delay := *batchDelay
	if delay == 0 {
		delay = -1 // serve.Options: negative = never wait
	}
	srv, err := serve.New(pipe, serve.Options{
		Name: *name, ModelFile: *modelPath, ReloadEndpoint: *reloadEndpoint, Backend: b,
		MaxBodyBytes: body, MaxRows: *maxRows, MaxBatch: *maxBatch, BatchDelay: delay,
		Workers: *workers, MaxInFlight: *maxInFlight, Logger: logger,
	})
	if err != nil {
		return err
	}
	defer srv.Close()

	if sigs == nil {
		sigs = make(chan os.Signal, 4)
		signal.Notify(sigs, syscall.SIGHUP, syscall.SIGTERM, os.Interrupt)
		defer signal.Stop(sigs)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	hs := srv.HTTPServer(*addr)
	hs.ReadTimeout, hs.WriteTimeout, hs.IdleTimeout = *readTimeout, *writeTimeout, *idleTimeout
	hs.ReadHeaderTimeout = min(5*time.Second, *readTimeout)
	var gs *grpc.Server
	var gln net.Listener
	if *grpcAddr != "" {
		if gln, err = net.Listen("tcp", *grpcAddr); err != nil {
			ln.Close()
			return err
		}
		gs = srv.GRPCServer()
	}
	served := make(chan error, 2)
	go func() { served <- hs.Serve(ln) }()
	if gs != nil {
		go func() {
			if err := gs.Serve(gln); err != nil {
				served <- fmt.Errorf("gRPC: %w", err)
			}
		}()
	}
	url := "http://" + ln.Addr().String()
	fmt.Fprintf(stdout, "zonal serve: %s model %q (d = %d, %d outputs, %s) on %s\n", pipe.Model.Kind(), *name, pipe.InputDim(), pipe.Outputs(), pipe.Encoding.Task, url)
	if note := recordedWeightsNote(pipe); note != "" {
		fmt.Fprintf(stdout, "  %s\n", note)
	}
	if gs != nil {
		fmt.Fprintf(stdout, "  gRPC (inference.GRPCInferenceService) on %s\n", gln.Addr())
	}
	fmt.Fprintf(stdout, "  curl -s %s/v1/predict -d '{\"rows\": [[...%d numbers...]]}'\n", url, pipe.InputDim())

	for {
		select {
		case err := <-served:
			return fmt.Errorf("server stopped: %w", err)
		case sig := <-sigs:
			if sig == syscall.SIGHUP {
				_ = srv.Reload() // logged and counted by the server; the old model keeps serving on error
				continue
			}
			logger.Info("shutting down: draining in-flight requests", "signal", sig.String(), "deadline", shutdownTimeout.String())
			srv.SetDraining(true)
			ctx, cancel := context.WithTimeout(context.Background(), *shutdownTimeout)
			grpcDone := make(chan struct{})
			if gs != nil {
				go func() {
					gs.GracefulStop()
					close(grpcDone)
				}()
			} else {
				close(grpcDone)
			}
			err := hs.Shutdown(ctx)
			if gs == nil {
				<-grpcDone
			}
			select {
			case <-grpcDone:
			case <-ctx.Done():
				gs.Stop() // cuts off the calls still running (gs is not nil: grpcDone would be closed)
				<-grpcDone
				if err == nil {
					err = fmt.Errorf("gRPC: %w", ctx.Err())
				}
			}
			cancel()
			if err != nil {
				hs.Close()
				return fmt.Errorf("requests still running after -shutdown-timeout %v were cut off: %w", *shutdownTimeout, err)
			}
			if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			logger.Info("stopped")
			return nil
		}
	}
}
