// go-runner: the entrypoint kops' static pods name (/go-runner --log-file=F --also-stdout BINARY ARGS...).
// Written for this project's test images from the flags kops' manifests use; Kubernetes' release images
// carry their own (k8s.io/release), which is not on the Go module proxy. It runs the command, sends its
// stdout (and stderr, unless --redirect-stderr=false) to the log file, also to stdout when asked, and exits
// with the command's status; SIGTERM and SIGINT are passed on.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

func main() {
	logFile := flag.String("log-file", "", "append the command's output to this file")
	alsoStdout := flag.Bool("also-stdout", false, "with --log-file, write the output to stdout too")
	redirectStderr := flag.Bool("redirect-stderr", true, "send the command's stderr where its stdout goes")
	flag.Parse()
	if flag.NArg() < 1 {
		fmt.Fprintln(os.Stderr, "go-runner: no command given")
		os.Exit(2)
	}
	out := io.Writer(os.Stdout)
	if *logFile != "" {
		file, err := os.OpenFile(*logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintf(os.Stderr, "go-runner: %v\n", err)
			os.Exit(1)
		}
		defer file.Close()
		out = file
		if *alsoStdout {
			out = io.MultiWriter(file, os.Stdout)
		}
	}
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stdout = out
	cmd.Stderr = os.Stderr
	if *redirectStderr {
		cmd.Stderr = out
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "go-runner: %v\n", err)
		os.Exit(1)
	}
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		for sig := range signals {
			_ = cmd.Process.Signal(sig)
		}
	}()
	err := cmd.Wait()
	if exit, ok := err.(*exec.ExitError); ok {
		os.Exit(exit.ExitCode())
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "go-runner: %v\n", err)
		os.Exit(1)
	}
}
