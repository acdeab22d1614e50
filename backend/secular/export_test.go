package secular

// SetIterHook installs a callback receiving the step count of every root
// found by the n >= 3 iteration (tests only; not safe for concurrent use).
func SetIterHook(f func(int)) { iterHook = f }
