package sqlstore

import (
	"context"
	"math"
	"time"

	"recon"
)

// reportListLimit bounds the unmatched and underpaid lists of a report.
const reportListLimit = 500

// Reconciliation implements recon.OrderStore: over the company's incoming
// transactions dated from..to (inclusive days), the count and amount of each
// match outcome, where a transaction's outcome is its last decision, and a
// transaction with no decision (no code, no sub-account) is unmatched; plus
// the unmatched transactions and the underpaid decisions, newest first.
// A listing's (recon.Listing) may read from the standby (WithStandby).
func (db *DB) Reconciliation(ctx context.Context, tenant recon.TenantID, from, to string) (*recon.ReconciliationReport, error) {
	return listed(ctx, db, func(db *DB) (*recon.ReconciliationReport, error) { return db.reconciliation(ctx, tenant, from, to) })
}

// reconciliation is Reconciliation on one database: the primary or the standby.
func (db *DB) reconciliation(ctx context.Context, tenant recon.TenantID, from, to string) (*recon.ReconciliationReport, error) {
	companyID := tenant.ID()
	fromT, err := time.Parse(recon.DateLayout, from)
	if err != nil {
		return nil, recon.FieldError("from", "from must be a date in the form YYYY-MM-DD")
	}
	toT, err := time.Parse(recon.DateLayout, to)
	if err != nil {
		return nil, recon.FieldError("to", "to must be a date in the form YYYY-MM-DD")
	}
	if toT.Before(fromT) {
		return nil, recon.FieldError("from", "from must not be after to")
	}
	toT = toT.AddDate(0, 0, 1)
	rep := &recon.ReconciliationReport{From: from, To: to, Counts: map[string]int64{}, Amounts: map[string]int64{}}
	for _, o := range []string{recon.MatchCaptured, recon.MatchUnderpaid, recon.MatchOverpaid, recon.MatchDuplicate, recon.MatchNone} {
		rep.Counts[o], rep.Amounts[o] = 0, 0
	}
	// The outcome of each incoming transaction in range: its last decision's, or unmatched.
	const outcomes = `
		SELECT t.id, t.amount_in, COALESCE((SELECT d.outcome FROM match_decisions d WHERE d.transaction_id = t.id ORDER BY d.id DESC LIMIT 1), 'unmatched') AS outcome
		FROM transactions t
		WHERE t.company_id = $1 AND t.amount_in > 0 AND t.transaction_date >= $2 AND t.transaction_date < $3 AND NOT ` + dupOut // possible duplicates count nowhere
	// The amounts are summed in two halves, the billions and the rest, so
	// that neither SQL sum can overflow (SQLite fails with "integer overflow",
	// PostgreSQL's numeric sum would not fit int64); Go adds them, checked.
	rows, err := db.db.QueryContext(ctx, `SELECT outcome, COUNT(*), COALESCE(SUM(amount_in / `+sumSplit+`), 0), COALESCE(SUM(amount_in % `+sumSplit+`), 0)
		FROM (`+outcomes+`) x GROUP BY outcome`, companyID, fromT, toT)
	if err != nil {
		return nil, internal(err, "reconciliation counts")
	}
	for rows.Next() {
		var o string
		var n, hi, lo int64
		if err := rows.Scan(&o, &n, &hi, &lo); err != nil {
			rows.Close()
			return nil, internal(err, "reconciliation counts")
		}
		sum, ok := joinSum(hi, lo)
		if !ok {
			rows.Close()
			return nil, recon.Errorf(recon.EINVALID, "the %s amounts from %s to %s add up to more than %d VND, the largest total a report can show: report on a shorter period", o, from, to, int64(math.MaxInt64))
		}
		rep.Counts[o], rep.Amounts[o] = n, sum
	}
	if err := rows.Close(); err != nil {
		return nil, internal(err, "reconciliation counts")
	}
	list, err := db.db.QueryContext(ctx, `
		SELECT `+transactionColumns+`
		FROM (`+outcomes+`) x JOIN transactions t ON t.id = x.id JOIN bank_accounts b ON b.id = t.bank_account_id
		WHERE x.outcome = 'unmatched' ORDER BY t.transaction_date DESC, t.id DESC LIMIT $4`,
		companyID, fromT, toT, reportListLimit)
	if err != nil {
		return nil, internal(err, "reconciliation unmatched")
	}
	defer list.Close()
	for list.Next() {
		t, err := scanTransaction(list)
		if err != nil {
			return nil, internal(err, "reconciliation unmatched")
		}
		rep.Unmatched = append(rep.Unmatched, t)
	}
	if err := list.Err(); err != nil {
		return nil, internal(err, "reconciliation unmatched")
	}
	rep.Underpaid, err = db.decisions(ctx, `SELECT `+prefixed("d.", decisionColumns)+` FROM match_decisions d JOIN transactions t ON t.id = d.transaction_id
		WHERE d.company_id = $1 AND d.outcome = 'underpaid' AND t.transaction_date >= $2 AND t.transaction_date < $3
		ORDER BY d.id DESC LIMIT $4`, companyID, fromT, toT, reportListLimit)
	if err != nil {
		return nil, err
	}
	return rep, nil
}

// sumSplit splits an amount for summing: amount = hi*sumSplit + lo. Each row's
// hi is at most recon.MaxAmount/sumSplit = 10^6, so the sum of the hi halves
// of any possible number of rows fits int64.
const sumSplit = "1000000000"

// joinSum returns hi*10^9 + lo, false when it does not fit int64.
func joinSum(hi, lo int64) (int64, bool) {
	const split = 1_000_000_000
	if hi > math.MaxInt64/split || hi < math.MinInt64/split {
		return 0, false
	}
	return recon.AddAmounts(hi*split, lo)
}
