package face

// keySet is the keys of an exchange's requests not answered yet. Most
// POSTs carry one request: its key is held inline, and a map is made only
// for a batch.
type keySet struct {
	one  string
	has  bool
	more map[string]bool
}

func (k *keySet) add(key string) {
	switch {
	case k.more != nil:
		k.more[key] = true
	case !k.has:
		k.one, k.has = key, true
	case k.one != key:
		k.more = map[string]bool{k.one: true, key: true}
		k.one, k.has = "", false
	}
}

func (k *keySet) contains(key string) bool {
	if k.more != nil {
		return k.more[key]
	}
	return k.has && k.one == key
}

func (k *keySet) remove(key string) {
	if k.more != nil {
		delete(k.more, key)
	} else if k.has && k.one == key {
		k.one, k.has = "", false
	}
}

func (k *keySet) len() int {
	if k.more != nil {
		return len(k.more)
	}
	if k.has {
		return 1
	}
	return 0
}

// keys is a copy of the set's keys.
func (k *keySet) keys() []string {
	if k.more == nil {
		if k.has {
			return []string{k.one}
		}
		return nil
	}
	keys := make([]string, 0, len(k.more))
	for key := range k.more {
		keys = append(keys, key)
	}
	return keys
}
