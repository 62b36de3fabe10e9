package scoring

import (
	"math"
	"math/bits"
	"slices"
)

// Summary describes a sample of one metric: the statistics every report
// prints. Quantiles use linear interpolation between order statistics
// (Hyndman and Fan type 7, the default of numpy.percentile and of Python's
// statistics.quantiles(method="inclusive")).
type Summary struct {
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	Median float64 `json:"median"`
	Q1     float64 `json:"q1"`
	Q3     float64 `json:"q3"`
	IQR    float64 `json:"iqr"`
	P95    float64 `json:"p95"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// Summarize computes the summary of xs (not modified). An empty sample
// gives the zero Summary.
func Summarize(xs []float64) Summary {
	if len(xs) == 0 {
		return Summary{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	q1, q3 := quantileSorted(s, 0.25), quantileSorted(s, 0.75)
	return Summary{
		N:      len(s),
		Mean:   round(Mean(s)),
		Median: round(quantileSorted(s, 0.5)),
		Q1:     round(q1),
		Q3:     round(q3),
		IQR:    round(q3 - q1),
		P95:    round(quantileSorted(s, 0.95)),
		Min:    s[0],
		Max:    s[len(s)-1],
	}
}

// round keeps 9 significant decimals so that reports do not depend on the
// last bits of floating-point summation order.
func round(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	return math.Round(x*1e9) / 1e9
}

// Mean is the arithmetic mean (0 for an empty sample).
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	// Kahan summation: the result does not drift with the order of xs.
	var sum, c float64
	for _, x := range xs {
		y := x - c
		t := sum + y
		c = (t - sum) - y
		sum = t
	}
	return sum / float64(len(xs))
}

// Quantile returns the p-quantile of xs (type 7); xs is not modified.
func Quantile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return quantileSorted(s, p)
}

func quantileSorted(s []float64, p float64) float64 {
	if len(s) == 1 {
		return s[0]
	}
	h := float64(len(s)-1) * p
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[i] + (h-lo)*(s[i+1]-s[i])
}

// variance is the sample variance (n-1 denominator).
func variance(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	m := Mean(xs)
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return ss / float64(len(xs)-1)
}

// Binomial returns C(n, k) as a float64 (0 when k < 0 or k > n).
func Binomial(n, k int) float64 {
	if k < 0 || k > n {
		return 0
	}
	if k > n-k {
		k = n - k
	}
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return math.Round(r)
}

// PassAtK is the unbiased estimator of the chance that at least one of k
// runs drawn from n runs with c successes succeeds: 1 - C(n-c,k)/C(n,k)
// (Chen et al., 2021). k is clamped to n.
func PassAtK(n, c, k int) float64 {
	if n == 0 || k <= 0 {
		return 0
	}
	k = min(k, n)
	if n-c < k {
		return 1
	}
	return round(1 - Binomial(n-c, k)/Binomial(n, k))
}

// PassHatK is the unbiased estimator of the chance that all of k runs drawn
// from n runs with c successes succeed: C(c,k)/C(n,k) (tau-bench's
// pass^k). k is clamped to n.
func PassHatK(n, c, k int) float64 {
	if n == 0 || k <= 0 {
		return 0
	}
	k = min(k, n)
	return round(Binomial(c, k) / Binomial(n, k))
}

// McNemar is the exact (binomial) two-sided McNemar test on paired
// pass/fail outcomes: b pairs went pass->fail, c went fail->pass. It returns
// min(1, 2 * P(X <= min(b,c))) for X ~ Binomial(b+c, 1/2); 1 when b+c = 0.
func McNemar(b, c int) float64 {
	n := b + c
	if n == 0 {
		return 1
	}
	k := min(b, c)
	// Sum in log space so large n neither overflows nor underflows.
	var p float64
	for i := 0; i <= k; i++ {
		lg := lgamma(n+1) - lgamma(i+1) - lgamma(n-i+1) - float64(n)*math.Ln2
		p += math.Exp(lg)
	}
	return math.Min(1, round(2*p))
}

func lgamma(n int) float64 {
	v, _ := math.Lgamma(float64(n))
	return v
}

// Welch is Welch's unequal-variances t test on two independent samples. It
// returns t (mean(b) - mean(a) over its standard error), the
// Welch-Satterthwaite degrees of freedom and the two-sided p-value. With
// zero standard error (both samples constant, as deterministic replays are)
// p is 0 when the means differ and 1 when they are equal; a sample of fewer
// than two values has no variance estimate and is treated the same way.
func Welch(a, b []float64) (t, df, p float64) {
	na, nb := float64(len(a)), float64(len(b))
	if len(a) == 0 || len(b) == 0 {
		return 0, 0, 1
	}
	ma, mb := Mean(a), Mean(b)
	va, vb := variance(a), variance(b)
	se2 := va/na + vb/nb
	if se2 == 0 || len(a) < 2 || len(b) < 2 {
		if math.Abs(ma-mb) <= 1e-12*math.Max(1, math.Abs(ma)) {
			return 0, 0, 1
		}
		if se2 == 0 {
			return math.Copysign(math.Inf(1), mb-ma), 0, 0
		}
		// One side has a single run: no variance estimate for it. Use the
		// other side's variance for both (a pooled fallback).
		v := math.Max(va, vb)
		se2 = v/na + v/nb
		t = (mb - ma) / math.Sqrt(se2)
		df = na + nb - 2
		if df < 1 {
			df = 1
		}
		return round(t), round(df), round(StudentTwoSided(t, df))
	}
	t = (mb - ma) / math.Sqrt(se2)
	df = se2 * se2 / ((va/na)*(va/na)/(na-1) + (vb/nb)*(vb/nb)/(nb-1))
	return round(t), round(df), round(StudentTwoSided(t, df))
}

// StudentTwoSided is P(|T| >= |t|) for Student's t with df degrees of
// freedom: I_{df/(df+t^2)}(df/2, 1/2).
func StudentTwoSided(t, df float64) float64 {
	if math.IsInf(t, 0) {
		return 0
	}
	if df <= 0 {
		return 1
	}
	x := df / (df + t*t)
	return math.Min(1, math.Max(0, regIncBeta(df/2, 0.5, x)))
}

// regIncBeta is the regularized incomplete beta function I_x(a, b), by the
// continued fraction of Numerical Recipes (betacf, modified Lentz).
func regIncBeta(a, b, x float64) float64 {
	if x <= 0 {
		return 0
	}
	if x >= 1 {
		return 1
	}
	la, _ := math.Lgamma(a + b)
	lb, _ := math.Lgamma(a)
	lc, _ := math.Lgamma(b)
	front := math.Exp(la - lb - lc + a*math.Log(x) + b*math.Log(1-x))
	if x < (a+1)/(a+b+2) {
		return front * betacf(a, b, x) / a
	}
	return 1 - front*betacf(b, a, 1-x)/b
}

func betacf(a, b, x float64) float64 {
	const (
		maxIter = 300
		eps     = 1e-15
		tiny    = 1e-300
	)
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, 1-qab*x/qap
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= maxIter; m++ {
		fm := float64(m)
		m2 := 2 * fm
		aa := fm * (b - fm) * x / ((qam + m2) * (a + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		h *= d * c
		aa = -(a + fm) * (qab + fm) * x / ((a + m2) * (qap + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}

// splitmix64 is the random source of the bootstrap: a fixed, documented
// algorithm (Steele, Lea and Flood 2014), so a seed gives the same resamples
// on every platform and Go version.
type splitmix64 uint64

func (s *splitmix64) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn returns a uniform integer in [0, n) (Lemire's multiply-shift with
// rejection, so there is no modulo bias).
func (s *splitmix64) intn(n int) int {
	un := uint64(n)
	for {
		hi, lo := bits.Mul64(s.next(), un)
		if lo >= un || lo >= (-un)%un {
			return int(hi)
		}
	}
}

// BootstrapMeanCI returns the percentile bootstrap confidence interval
// (level, e.g. 0.95) of the mean of xs, from resamples draws seeded with
// seed. Paired comparisons pass the per-scenario differences.
func BootstrapMeanCI(xs []float64, resamples int, level float64, seed uint64) (lo, hi float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	if resamples <= 0 {
		resamples = DefaultResamples
	}
	rng := splitmix64(seed)
	means := make([]float64, resamples)
	buf := make([]float64, len(xs))
	for r := range means {
		for i := range buf {
			buf[i] = xs[rng.intn(len(xs))]
		}
		means[r] = Mean(buf)
	}
	slices.Sort(means)
	alpha := (1 - level) / 2
	return round(quantileSorted(means, alpha)), round(quantileSorted(means, 1-alpha))
}

// DefaultResamples is the number of bootstrap resamples when none is set.
const DefaultResamples = 2000

// PairedT is the two-sided p-value of the paired t test on the differences
// ds (after - before of each pair): t = mean(ds) / (sd(ds)/√n) with n-1
// degrees of freedom. When the differences have no spread, all the same
// (deterministic replays) or a single one, p is 0 if they are not 0 and 1
// if they are: there is no noise to tell the change from. No pair: p is 1.
func PairedT(ds []float64) float64 {
	n := len(ds)
	if n == 0 {
		return 1
	}
	m := Mean(ds)
	v := variance(ds)
	if n < 2 || v <= 1e-24*math.Max(1, m*m) {
		if math.Abs(m) <= 1e-12*math.Max(1, math.Abs(m)) {
			return 1
		}
		return 0
	}
	t := m / math.Sqrt(v/float64(n))
	return round(StudentTwoSided(t, float64(n-1)))
}
