package engine

// SetBatches makes e import importPages pages per transaction and handle
// backlinks jobs backlinks pages at a time (0 keeps the default): a test
// crosses the batches with a tenth of the pages. Call it before e is used.
func SetBatches(e *Engine, importPages, backlinks int) {
	if importPages > 0 {
		e.importBatch = importPages
	}
	if backlinks > 0 {
		e.backlinkBatch = backlinks
	}
}
