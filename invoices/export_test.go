package invoices

import "time"

// SetAutoRunFor replaces the bound of an AutoInvoice run's time (autoRunFor).
func (s *Service) SetAutoRunFor(d time.Duration) { s.runFor = d }
