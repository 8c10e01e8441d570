package clientconf

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestMoveAndRestore: for every client, connecting and moving out every
// entry of the fixture leaves only Plexus's (no canary secret inline);
// disconnecting with the record gives the fixture back byte for byte; and
// if the client changed its file in between (here: Plexus's entry taken out
// by hand), the moved entries still come back, decoding as they were.
func TestMoveAndRestore(t *testing.T) {
	for _, name := range Clients() {
		t.Run(name, func(t *testing.T) {
			before, err := os.ReadFile(filepath.Join("testdata", name+".before"))
			if err != nil {
				t.Fatal(err)
			}
			names, err := Servers(name, before)
			if err != nil {
				t.Fatal(err)
			}
			if len(names) == 0 {
				t.Skip("the fixture has no server of the user's")
			}
			connected, err := Edit(name, before, testCommand, true)
			if err != nil {
				t.Fatal(err)
			}
			moved, err := Remove(name, connected, names)
			if err != nil {
				t.Fatal(err)
			}
			if left, _ := Servers(name, moved); len(left) != 0 {
				t.Errorf("left in the file: %v", left)
			}
			c := clients[name]
			doc, _ := decode(c.format, moved)
			if s := strings.Join(canary.FindAllString(fmtValue(lookup(doc, c.serverKeys())), -1), " "); s != "" {
				t.Errorf("secrets still inline: %s", s)
			}
			m := Moved{Client: name, Names: names, Before: string(before), After: string(moved)}
			back, err := Restore(name, moved, m)
			if err != nil || string(back) != string(before) {
				t.Fatalf("restore: %v\n%s", err, back)
			}
			// The client rewrote the file meanwhile: the entries still
			// come back (and disconnect takes Plexus's out).
			changed, err := Edit(name, moved, testCommand, false)
			if err != nil {
				t.Fatal(err)
			}
			back, err = Restore(name, changed, m)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := decode(c.format, before)
			got, err := decode(c.format, back)
			if err != nil {
				t.Fatalf("%v\n%s", err, back)
			}
			if !reflect.DeepEqual(lookup(got, c.serverKeys()), lookup(want, c.serverKeys())) {
				t.Errorf("restored after a change:\n%s\nwant the entries of:\n%s", back, before)
			}
		})
	}
}

func fmtValue(v any) string { return fmt.Sprint(v) }
