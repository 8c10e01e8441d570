package config

import (
	"reflect"
	"testing"
)

func TestClone(t *testing.T) {
	f := fullFile()
	c := f.Clone()
	if !reflect.DeepEqual(f, c) {
		t.Fatalf("Clone differs:\n%+v\n%+v", f, c)
	}
	if shared := sharedMemory(reflect.ValueOf(f), reflect.ValueOf(c), "File"); shared != "" {
		t.Errorf("Clone shares %s with the original", shared)
	}
	if (*File)(nil).Clone() != nil {
		t.Error("nil.Clone() != nil")
	}
	if c := (&File{}).Clone(); !reflect.DeepEqual(c, &File{}) {
		t.Errorf("Clone of an empty File = %+v, want nil maps kept nil", c)
	}
}

// sharedMemory returns the path of the first pointer, map or slice that a and
// b (deep-equal values) both point at, or "".
func sharedMemory(a, b reflect.Value, path string) string {
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() {
			return ""
		}
		if a.Pointer() == b.Pointer() {
			return path
		}
		return sharedMemory(a.Elem(), b.Elem(), path)
	case reflect.Map:
		if a.IsNil() {
			return ""
		}
		if a.Pointer() == b.Pointer() {
			return path
		}
		for _, k := range a.MapKeys() {
			if s := sharedMemory(a.MapIndex(k), b.MapIndex(k), path+"["+k.String()+"]"); s != "" {
				return s
			}
		}
	case reflect.Slice:
		if a.Len() > 0 && a.Pointer() == b.Pointer() {
			return path
		}
	case reflect.Struct:
		for i := range a.NumField() {
			if s := sharedMemory(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); s != "" {
				return s
			}
		}
	}
	return ""
}
