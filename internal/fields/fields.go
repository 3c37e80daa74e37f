// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package fields reads a kernel's exported configuration fields by name,
// for the packages (the root's automatic default, stancsv, the command)
// that need a kernel's proposal without a method on every kernel type.
package fields

import "reflect"

// Proposal returns the value of k's exported field Proposal (k a struct
// or a pointer to one), or nil if it has none or it is nil.
func Proposal(k any) any {
	v := reflect.ValueOf(k)
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil
	}
	f := v.FieldByName("Proposal")
	if !f.IsValid() || f.Kind() != reflect.Interface || f.IsNil() || !f.CanInterface() {
		return nil
	}
	return f.Interface()
}
