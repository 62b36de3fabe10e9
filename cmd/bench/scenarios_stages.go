package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/mcpbench/bench/internal/escape"
	"github.com/mcpbench/bench/scenarios"
)

// bench scenarios stages: the stages in effect, as YAML.
func newScenariosStagesCmd(a *app) *cobra.Command {
	var config string
	cmd := &cobra.Command{
		Use:   "stages",
		Short: "Print the stages in effect: the built-in ones, with bench.yaml read over them",
		Long: `stages prints the stages record, replay and report select with --stage, as
YAML a bench.yaml can start from: bench's built-in stages (smoke, core,
safety, with their runs and gates), and when --config names a file or
./bench.yaml exists, that file read over them (a stage of the same name
replaces the built-in one, a new name adds a stage).`,
		Example: `  bench scenarios stages > bench.yaml   # then edit a stage's gate`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(config)
			if err != nil {
				return usageErr(err)
			}
			if cfg.File == scenarios.BuiltinConfigName {
				_, err := a.stdout.Write(scenarios.BuiltinStages())
				return err
			}
			b, err := yaml.Marshal(cfg)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "# The built-in stages with %s read over them.\n", escape.Line(cfg.File))
			_, err = a.stdout.Write(b)
			return err
		},
	}
	cmd.Flags().StringVar(&config, "config", "", "stages read over the built-in ones (default: ./bench.yaml when it exists)")
	return cmd
}
