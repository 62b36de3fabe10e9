package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

func newTracesGCCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "gc",
		Short: "Remove runs and blobs that no ref reaches, and compact the store",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTracesGC(cmd.Context(), a)
		},
	}
}

func runTracesGC(ctx context.Context, a *app) error {
	s, err := openStore(a)
	if err != nil {
		return err
	}
	defer s.Close()
	rep, err := s.GC(ctx)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(a.stdout, "removed %d runs (%d of them bases) (%s stored)\n", rep.RunsRemoved, rep.BasesRemoved, humanBytes(rep.BytesRemoved))
	return err
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
