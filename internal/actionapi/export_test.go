package actionapi

// SetContentBudget lowers the per-response text budget for a test; the
// returned function restores it.
func SetContentBudget(n int) func() {
	old := contentBudget
	contentBudget = n
	return func() { contentBudget = old }
}
