package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/pflag"
)

// Numeric flags that refuse values outside their range when they are
// parsed, so that `--runs 0` or `--latency-resolution -1s` is a usage error
// (exit 2) naming the flag, never a value silently ignored or replaced.

// intFlag is an int flag that must be at least min.
type intFlag struct {
	p   *int
	min int
}

func (f *intFlag) String() string { return strconv.Itoa(*f.p) }
func (f *intFlag) Type() string   { return "int" }
func (f *intFlag) Set(s string) error {
	v, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("not a whole number")
	}
	if v < f.min {
		return fmt.Errorf("%d is out of range: want at least %d", v, f.min)
	}
	*f.p = v
	return nil
}

// intVarMin defines an int flag that must be at least min.
func intVarMin(fs *pflag.FlagSet, p *int, name string, def, min int, usage string) {
	*p = def
	fs.Var(&intFlag{p: p, min: min}, name, usage)
}

type durationFlag struct {
	p        *time.Duration
	min      time.Duration
	positive bool // min is exclusive
}

func (f *durationFlag) String() string { return f.p.String() }
func (f *durationFlag) Type() string   { return "duration" }
func (f *durationFlag) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("not a duration (such as 500ms, 30s, 2m)")
	}
	if v < f.min || f.positive && v == f.min {
		want := "at least " + f.min.String()
		if f.positive {
			want = "more than " + f.min.String()
		}
		return fmt.Errorf("%s is out of range: want %s", v, want)
	}
	*f.p = v
	return nil
}

// durationVarPositive defines a duration flag that must be more than 0.
func durationVarPositive(fs *pflag.FlagSet, p *time.Duration, name string, def time.Duration, usage string) {
	*p = def
	fs.Var(&durationFlag{p: p, positive: true}, name, usage)
}

// durationVarNonNegative defines a duration flag that must be at least 0.
func durationVarNonNegative(fs *pflag.FlagSet, p *time.Duration, name string, def time.Duration, usage string) {
	*p = def
	fs.Var(&durationFlag{p: p}, name, usage)
}

type floatFlag struct {
	p        *float64
	min, max float64
}

func (f *floatFlag) String() string { return strconv.FormatFloat(*f.p, 'g', -1, 64) }
func (f *floatFlag) Type() string   { return "float" }
func (f *floatFlag) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("not a number")
	}
	if !(v >= f.min && v <= f.max) { // NaN too
		return fmt.Errorf("%s is out of range: want %g to %g", s, f.min, f.max)
	}
	*f.p = v
	return nil
}

// floatVarRange defines a float flag that must lie in [min, max].
func floatVarRange(fs *pflag.FlagSet, p *float64, name string, def, min, max float64, usage string) {
	*p = def
	fs.Var(&floatFlag{p: p, min: min, max: max}, name, usage)
}
