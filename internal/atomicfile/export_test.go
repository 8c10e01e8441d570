package atomicfile

// SetTestHook installs a function run between the steps of every write.
func SetTestHook(f func(step string)) { testHook = f }
