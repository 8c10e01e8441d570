package cli

import (
	"reflect"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plexus-mcp/plexus/internal/apitype"
)

// settingKeys are the keys of `plexus settings`, read off the settings
// API's own wire struct (apitype.Settings, its JSON names): a setting the
// API gains is a key here, in checkSettingKey's list and in completion,
// with nothing else to update. A map (profiles) is one key per entry,
// written "profiles.NAME".
var settingKeys = keysOf(reflect.TypeFor[apitype.Settings](), "")

func keysOf(t reflect.Type, prefix string) []string {
	var keys []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || name == "revision" {
			continue
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch ft.Kind() {
		case reflect.Struct:
			keys = append(keys, keysOf(ft, prefix+name+".")...)
		case reflect.Map:
			keys = append(keys, prefix+name+".NAME")
		default:
			keys = append(keys, prefix+name)
		}
	}
	return keys
}

// completeSettingKeys completes the KEY of settings get, set and unset:
// every key, and "profiles.NAME" as the profiles the daemon has (unset
// takes only those); the daemon not answering leaves the fixed keys.
func (a *app) completeSettingKeys(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, k := range settingKeys {
		if strings.HasSuffix(k, ".NAME") {
			continue
		}
		if strings.HasPrefix(k, toComplete) {
			out = append(out, k)
		}
	}
	if c, err := a.client(); err == nil {
		if s, err := c.Settings(cmd.Context()); err == nil {
			for name := range s.Profiles {
				if k := setProfilePrefix + name; strings.HasPrefix(k, toComplete) {
					out = append(out, k)
				}
			}
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
