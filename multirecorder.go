// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import "errors"

// MultiRecorder returns a Recorder that passes a run to each of recs in
// turn (nil ones are left out), as io.MultiWriter does writes, so that a
// run can write Stan CSV files and report progress at once:
//
//   - Init and Record go to every recorder, in order; the first error
//     stops the call and is returned.
//   - Finish goes to every recorder that is a RunFinisher, all of them even
//     if one fails (each may have files to close); the errors are joined.
//   - InitResume goes to every ResumeRecorder. A recorder that is not one
//     gets what Sample, Resume and LoadCheckpoint give it when it is the
//     run's only recorder: nothing if this MultiRecorder's Init was called
//     (a run resumed in the same process, where it keeps recording), else
//     Init with the resumed run (after LoadCheckpoint, whose Init a
//     ResumeRecorder does not get).
//
// The result implements ResumeRecorder and RunFinisher. Record is safe for
// concurrent use when every recorder's is; the others are called once per
// run, before or after the chains, as the driver calls them.
func MultiRecorder(recs ...Recorder) ResumeRecorder {
	m := &multiRecorder{}
	for _, r := range recs {
		if r != nil {
			m.recs = append(m.recs, r)
		}
	}
	return m
}

type multiRecorder struct {
	recs   []Recorder
	inited bool // Init was called: the recorders saw the run's start
}

func (m *multiRecorder) Init(run RunInfo) error {
	m.inited = true
	for _, r := range m.recs {
		if err := r.Init(run); err != nil {
			return err
		}
	}
	return nil
}

func (m *multiRecorder) InitResume(run RunInfo, res *Result) error {
	for _, r := range m.recs {
		var err error
		switch rr, ok := r.(ResumeRecorder); {
		case ok:
			err = rr.InitResume(run, res)
		case !m.inited:
			err = r.Init(run)
		}
		if err != nil {
			return err
		}
	}
	m.inited = true
	return nil
}

func (m *multiRecorder) Record(e *Event) error {
	for _, r := range m.recs {
		if err := r.Record(e); err != nil {
			return err
		}
	}
	return nil
}

func (m *multiRecorder) Finish(res *Result) error {
	var errs []error
	for _, r := range m.recs {
		if f, ok := r.(RunFinisher); ok {
			errs = append(errs, f.Finish(res))
		}
	}
	return errors.Join(errs...)
}

// MultiRecorder's result satisfies the recorder contracts (contracts.go).
var (
	_ ResumeRecorder = (*multiRecorder)(nil)
	_ RunFinisher    = (*multiRecorder)(nil)
)
