// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
)

// TestRegistryComplete fails when an exported kernel of the package is
// missing from the registry (exactmh.Kernels), which the golden, fuzz,
// ErrNoBound and conformance tests, the exactmh command and the automatic
// default range over: a kernel left out of it would be tested by none of
// them.
func TestRegistryComplete(t *testing.T) {
	registered := map[string]bool{}
	for _, ki := range exactmh.Kernels() {
		registered[reflect.TypeOf(ki.New(nil)).Name()] = true
	}
	missing, err := unregisteredKernels(".", registered)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range missing {
		t.Errorf("kernel %s is not in the registry (registry.go): add its entry", name)
	}
}

// TestRegistryCheckerCatchesOmission holds the checker of
// TestRegistryComplete to its word: in a package with a registered, an
// unregistered, an unexported and a generic kernel it reports the
// unregistered one, and only it.
func TestRegistryCheckerCatchesOmission(t *testing.T) {
	dir := t.TempDir()
	src := `package exactmh

type Registered struct{}

func (Registered) Name() string { return "Registered" }
func (Registered) Exact() bool  { return true }
func (Registered) Start(t *Target, theta0 []float64) (Chain, error) { return nil, nil }

type Forgotten struct{ Scale float64 }

func (Forgotten) Name() string { return "Forgotten" }
func (Forgotten) Exact() bool  { return true }
func (k *Forgotten) Start(t *Target, theta0 []float64) (Chain, error) { return nil, nil }

type private struct{}

func (private) Name() string { return "private" }
func (private) Exact() bool  { return true }
func (private) Start(t *Target, theta0 []float64) (Chain, error) { return nil, nil }

type Framework[S any] struct{ Scheme S }

func (Framework[S]) Name() string { return "Framework" }
func (Framework[S]) Exact() bool  { return true }
func (Framework[S]) Start(t *Target, theta0 []float64) (Chain, error) { return nil, nil }

// NotAKernel has Name and Exact but starts no Chain.
type NotAKernel struct{}

func (NotAKernel) Name() string { return "" }
func (NotAKernel) Exact() bool  { return true }
func (NotAKernel) Start() error { return nil }
`
	if err := os.WriteFile(filepath.Join(dir, "kernels.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	// A test file's kernels are not the package's.
	if err := os.WriteFile(filepath.Join(dir, "kernels_test.go"), []byte(strings.ReplaceAll(src, "Forgotten", "TestOnly")), 0o644); err != nil {
		t.Fatal(err)
	}
	missing, err := unregisteredKernels(dir, map[string]bool{"Registered": true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(missing, []string{"Forgotten"}) {
		t.Errorf("unregistered kernels %q, want [Forgotten]", missing)
	}
	missing, err = unregisteredKernels(dir, map[string]bool{"Registered": true, "Forgotten": true})
	if err != nil || len(missing) > 0 {
		t.Errorf("all registered: %q, %v; want none", missing, err)
	}
}

// unregisteredKernels parses the package's non-test Go files in dir and
// returns, sorted, the exported non-generic types with the methods of
// exactmh.Kernel (Name() string, Exact() bool and a Start returning a
// Chain and an error, on the value or the pointer) that registered lacks.
// Generic kernels (Aux, Exchange) are frameworks built from the caller's
// scheme or model, with no default configuration to register.
func unregisteredKernels(dir string, registered map[string]bool) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	methods := map[string]map[string]bool{}
	generic := map[string]bool{}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					if ts, ok := spec.(*ast.TypeSpec); ok && ts.TypeParams != nil {
						generic[ts.Name.Name] = true
					}
				}
			case *ast.FuncDecl:
				if d.Recv == nil || len(d.Recv.List) != 1 || !kernelMethod(d) {
					continue
				}
				recv := receiverName(d.Recv.List[0].Type)
				if methods[recv] == nil {
					methods[recv] = map[string]bool{}
				}
				methods[recv][d.Name.Name] = true
			}
		}
	}
	var missing []string
	for name, m := range methods {
		if ast.IsExported(name) && !generic[name] && len(m) == 3 && !registered[name] {
			missing = append(missing, name)
		}
	}
	slices.Sort(missing)
	return missing, nil
}

// kernelMethod reports whether d has the signature of one of Kernel's
// methods.
func kernelMethod(d *ast.FuncDecl) bool {
	results := func(names ...string) bool {
		r := d.Type.Results
		if r == nil || len(r.List) != len(names) {
			return false
		}
		for i, f := range r.List {
			if id, ok := f.Type.(*ast.Ident); !ok || id.Name != names[i] || len(f.Names) > 1 {
				return false
			}
		}
		return true
	}
	switch d.Name.Name {
	case "Name":
		return d.Type.Params.NumFields() == 0 && results("string")
	case "Exact":
		return d.Type.Params.NumFields() == 0 && results("bool")
	case "Start":
		return d.Type.Params.NumFields() == 2 && results("Chain", "error")
	}
	return false
}

// receiverName returns the type name of a method's receiver: T for T, *T,
// T[P] and *T[P].
func receiverName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// TestRegistryEntries checks each entry against its kernel: the name it
// records is the kernel's (Kernel.Name of New(nil)), Exact is the
// kernel's, a CLI name is unique, and what it needs is said consistently.
func TestRegistryEntries(t *testing.T) {
	names, cli := map[string]bool{}, map[string]bool{}
	for _, ki := range exactmh.Kernels() {
		k := ki.New(nil)
		if k.Name() != ki.Name {
			t.Errorf("registry entry %s: New(nil).Name() = %q", ki.Name, k.Name())
		}
		if k.Exact() != ki.Exact {
			t.Errorf("registry entry %s: Exact %t, the kernel's %t", ki.Name, ki.Exact, k.Exact())
		}
		if names[ki.Name] || ki.CLI != "" && cli[ki.CLI] {
			t.Errorf("registry entry %s (CLI %q) twice", ki.Name, ki.CLI)
		}
		names[ki.Name], cli[ki.CLI] = true, ki.CLI != ""
		if (ki.NeedsDiffBound || ki.NeedsRange) && !ki.NeedsBound {
			t.Errorf("registry entry %s needs a DiffBound or EnergyRange but not a bound", ki.Name)
		}
		if ki.CLI != "" && !ki.Exact {
			t.Errorf("registry entry %s: the command offers only exact kernels", ki.Name)
		}
		if ki.Family.String() == "KernelFamily(?)" {
			t.Errorf("registry entry %s: family %d has no name", ki.Name, ki.Family)
		}
	}
}

// TestRegistryMultilevel holds the registry's NeedsMultilevel to its
// word: a multilevel kernel's default configuration (New(nil), which
// finds the Laplace-EM centre) starts on a multilevel posterior and is
// refused on a flat one with an error saying it needs a multilevel model;
// every other kernel's default starts on the flat one.
func TestRegistryMultilevel(t *testing.T) {
	_, ml, err := mcmctest.MultilevelModel{N: 60, Groups: 6}.Draw(rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	flat := logisticPosterior()
	start := func(p *exactmh.Posterior, k exactmh.Kernel, theta0 []float64) error {
		tg, err := exactmh.NewTarget(p)
		if err != nil {
			t.Fatal(err)
		}
		_, err = k.Start(tg, theta0)
		return err
	}
	for _, ki := range exactmh.Kernels() {
		if !ki.NeedsMultilevel {
			continue
		}
		if err := start(ml.Posterior, ki.New(nil), ml.Mode); err != nil {
			t.Errorf("%s: New(nil) on a multilevel model: %v", ki.Name, err)
		}
		if err := start(flat, ki.New(nil), []float64{0, 0}); err == nil || !strings.Contains(err.Error(), "multilevel model") {
			t.Errorf("%s on a flat model: error %v, want one saying it needs a multilevel model", ki.Name, err)
		}
		if ki.TakesProposal() || ki.NeedsCenter {
			t.Errorf("%s: a multilevel kernel has no dense Laplace approximation: TakesProposal %t, NeedsCenter %t", ki.Name, ki.TakesProposal(), ki.NeedsCenter)
		}
	}
	for _, k := range []exactmh.Kernel{exactmh.NUTS{NonCentred: true}, exactmh.HMC{NonCentred: true}} {
		if err := start(ml.Posterior, k, ml.Mode); err != nil {
			t.Errorf("%s non-centred on a multilevel model: %v", k.Name(), err)
		}
		if err := start(flat, k, []float64{0, 0}); err == nil || !strings.Contains(err.Error(), "multilevel model") {
			t.Errorf("%s non-centred on a flat model: error %v, want one saying it needs a multilevel model", k.Name(), err)
		}
	}
}

// TestRegisterOrderAndDuplicates checks the open registry: package
// multilevel's kernels, registered at its init (imported here through
// model), come after the root's exact kernels and before the inexact
// comparators, as Kernels documents; registering a name or --kernel name
// twice panics, as sql.Register does.
func TestRegisterOrderAndDuplicates(t *testing.T) {
	var names []string
	firstInexact := -1
	for i, ki := range exactmh.Kernels() {
		names = append(names, ki.Name)
		if !ki.Exact && firstInexact < 0 {
			firstInexact = i
		}
		if ki.Exact && firstInexact >= 0 {
			t.Errorf("exact kernel %s after the inexact %s: %v", ki.Name, names[firstInexact], names)
		}
	}
	gs, gg := slices.Index(names, "GroupSMH"), slices.Index(names, "GroupGibbs")
	if gs < 0 || gg != gs+1 || names[gs-1] != "TunaMH-SGLD" {
		t.Errorf("registry %v: want GroupSMH and GroupGibbs, registered by package multilevel, right after TunaMH-SGLD", names)
	}
	for _, ki := range []exactmh.KernelInfo{
		{Name: "GroupGibbs", New: func([]float64) exactmh.Kernel { return exactmh.MH{} }},
		{Name: "MH2", CLI: "mh", New: func([]float64) exactmh.Kernel { return exactmh.MH{} }},
		{Name: "", New: func([]float64) exactmh.Kernel { return exactmh.MH{} }},
		{Name: "NoNew"},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%q, --kernel %q) did not panic", ki.Name, ki.CLI)
				}
			}()
			exactmh.Register(ki)
		}()
	}
	if n := len(exactmh.Kernels()); n != len(names) {
		t.Errorf("%d kernels after the refused registrations, want %d", n, len(names))
	}
}

// capability is one setter a kernel may declare (exactmh's capabilities.go):
// the field it sets and a value to set it to, not the zero value.
type capability struct {
	field string
	// set calls k's setter with v, reporting false if k does not declare it.
	set func(k exactmh.Kernel, v any) (exactmh.Kernel, bool)
	v   any
}

// setterOf is the capability of the kernels that implement I.
func setterOf[I any, V any](field string, v V, with func(I, V) exactmh.Kernel) capability {
	return capability{field: field, v: v, set: func(k exactmh.Kernel, v any) (exactmh.Kernel, bool) {
		i, ok := k.(I)
		if !ok {
			return k, false
		}
		return with(i, v.(V)), true
	}}
}

// capabilities are every setter a kernel can declare.
var capabilities = []capability{
	setterOf("Scale", 0.37, func(k interface{ WithScale(float64) exactmh.Kernel }, v float64) exactmh.Kernel {
		return k.WithScale(v)
	}),
	setterOf[interface {
		WithProposal(exactmh.Proposal) exactmh.Kernel
	}, exactmh.Proposal]("Proposal", &exactmh.GaussianWalk{}, func(k interface {
		WithProposal(exactmh.Proposal) exactmh.Kernel
	}, v exactmh.Proposal) exactmh.Kernel {
		return k.WithProposal(v)
	}),
	setterOf("Chi", 0.61, func(k interface{ WithChi(float64) exactmh.Kernel }, v float64) exactmh.Kernel { return k.WithChi(v) }),
	setterOf("Steps", 7, func(k interface{ WithSteps(int) exactmh.Kernel }, v int) exactmh.Kernel { return k.WithSteps(v) }),
	setterOf("Q", 0.23, func(k interface{ WithQ(float64) exactmh.Kernel }, v float64) exactmh.Kernel { return k.WithQ(v) }),
	setterOf("Lambda", 3.5, func(k interface{ WithLambda(float64) exactmh.Kernel }, v float64) exactmh.Kernel {
		return k.WithLambda(v)
	}),
	setterOf("NonCentred", true, func(k interface{ WithNonCentred(bool) exactmh.Kernel }, v bool) exactmh.Kernel {
		return k.WithNonCentred(v)
	}),
}

// capabilityErrors says where kernel k's declared capabilities disagree
// with what they do: a setter that does not return k's type with exactly
// its field set to the value (every other field as it was), a getter
// (InitialScale, Proposer) that does not read that field back, or an
// exported field of a capability's name and type without its setter.
func capabilityErrors(k exactmh.Kernel) []string {
	var errs []string
	kv := reflect.ValueOf(k)
	for _, c := range capabilities {
		f, fieldOK := kv.Type().FieldByName(c.field)
		fieldOK = fieldOK && f.IsExported() && reflect.TypeOf(c.v).AssignableTo(f.Type)
		nk, ok := c.set(k, c.v)
		switch {
		case !ok && fieldOK:
			errs = append(errs, fmt.Sprintf("%s has a field %s but declares no setter for it", k.Name(), c.field))
			continue
		case !ok:
			continue
		case !fieldOK:
			errs = append(errs, fmt.Sprintf("%s declares a setter of %s but has no such field", k.Name(), c.field))
			continue
		case reflect.TypeOf(nk) != kv.Type():
			errs = append(errs, fmt.Sprintf("%s's %s setter returns a %T", k.Name(), c.field, nk))
			continue
		}
		want := reflect.New(kv.Type()).Elem()
		want.Set(kv)
		want.FieldByName(c.field).Set(reflect.ValueOf(c.v))
		if got := reflect.ValueOf(nk).FieldByName(c.field).Interface(); !reflect.DeepEqual(got, c.v) {
			errs = append(errs, fmt.Sprintf("%s: setting %s to %v left it %v", k.Name(), c.field, c.v, got))
		} else if !reflect.DeepEqual(nk, want.Interface()) {
			errs = append(errs, fmt.Sprintf("%s: setting %s changed other fields: %+v, want %+v", k.Name(), c.field, nk, want.Interface()))
		}
		if g, ok := nk.(interface{ InitialScale() float64 }); ok && c.field == "Scale" && g.InitialScale() != c.v {
			errs = append(errs, fmt.Sprintf("%s: InitialScale %v after WithScale(%v)", k.Name(), g.InitialScale(), c.v))
		}
		if g, ok := nk.(interface{ Proposer() exactmh.Proposal }); ok && c.field == "Proposal" && g.Proposer() != c.v {
			errs = append(errs, fmt.Sprintf("%s: Proposer %v after WithProposal(%v)", k.Name(), g.Proposer(), c.v))
		}
	}
	if _, ok := k.(interface{ WithScale(float64) exactmh.Kernel }); ok {
		if _, ok := k.(interface{ InitialScale() float64 }); !ok {
			errs = append(errs, k.Name()+" declares WithScale without InitialScale")
		}
	}
	if _, ok := k.(interface {
		WithProposal(exactmh.Proposal) exactmh.Kernel
	}); ok {
		if _, ok := k.(interface{ Proposer() exactmh.Proposal }); !ok {
			errs = append(errs, k.Name()+" declares WithProposal without Proposer")
		}
	}
	return errs
}

// TestKernelCapabilities: every registered kernel's declared capabilities
// (the setters WithLaplace, the automatic default and the exactmh
// command's flags use) set exactly the field they name, the getters read
// it back, and a kernel with a field of a capability's name declares its
// setter; KernelInfo.TakesProposal and the registry agree with them.
func TestKernelCapabilities(t *testing.T) {
	seen := map[string]bool{}
	for _, ki := range exactmh.Kernels() {
		seen[ki.Name] = true
		k := ki.New(nil)
		for _, e := range capabilityErrors(k) {
			t.Error(e)
		}
		_, prop := k.(interface {
			WithProposal(exactmh.Proposal) exactmh.Kernel
		})
		if want := prop && ki.Exact && !ki.NeedsMultilevel; ki.TakesProposal() != want {
			t.Errorf("%s: TakesProposal %t, want %t", ki.Name, ki.TakesProposal(), want)
		}
	}
	if !seen["GroupSMH"] {
		t.Error("GroupSMH (package multilevel) is not registered in this test binary: its capabilities go unchecked")
	}
}

// TestKernelCapabilitiesChecker: capabilityErrors catches a setter that
// sets nothing, one that sets another field, and a field without its
// setter.
func TestKernelCapabilitiesChecker(t *testing.T) {
	for _, c := range []struct {
		k    exactmh.Kernel
		want string
	}{
		{noopScale{}, "left it"},
		{wrongScale{}, "changed other fields"},
		{fieldOnly{}, "declares no setter"},
	} {
		errs := capabilityErrors(c.k)
		if !slices.ContainsFunc(errs, func(e string) bool { return strings.Contains(e, c.want) }) {
			t.Errorf("%T: errors %q, want one saying %q", c.k, errs, c.want)
		}
	}
}

// Deliberately wrong kernels for TestKernelCapabilitiesChecker.
type (
	noopScale  struct{ exactmh.MALA }
	wrongScale struct {
		exactmh.HMC
		Scale float64
		Steps int
	}
	fieldOnly struct {
		exactmh.MALA
		Lambda float64
	}
)

func (k noopScale) WithScale(float64) exactmh.Kernel { return k }
func (k noopScale) InitialScale() float64            { return k.Scale }
func (k wrongScale) WithScale(s float64) exactmh.Kernel {
	k.Steps = int(s * 100)
	k.Scale = s
	return k
}
func (k wrongScale) InitialScale() float64 { return k.Scale }
