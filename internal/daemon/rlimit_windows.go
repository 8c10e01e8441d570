package daemon

// openFiles: Windows has no per-process limit of this kind worth reading;
// the budget is that of a common Unix default.
func openFiles() int { return 8192 }
