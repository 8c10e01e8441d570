package clientconf

// syncDir: Windows cannot open a directory to sync it; os.Rename's
// MoveFileEx is what it offers.
func syncDir(string) error { return nil }
