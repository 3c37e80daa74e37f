package exactmh_test

import (
	"testing"

	"github.com/exactmh/exactmh"
)

func BenchmarkPoissonBarkerStepLogistic(b *testing.B) {
	benchmarkKernel(b, tallLogistic(b), exactmh.PoissonBarker{Scale: 0.02})
}

func BenchmarkPoissonMALAStepLogistic(b *testing.B) {
	benchmarkKernel(b, tallLogistic(b), exactmh.PoissonMALA{Scale: 0.02})
}
