package recon

import (
	"hash/fnv"
	"strconv"
	"strings"
)

// Possible duplicates (docs/statements.md, Possible duplicates): the same
// transfer arriving twice under two references (a bank feed's and a
// statement's) is stored the second time as a possible duplicate, kept out
// of totals, balances, matching and notifications until a person says
// which it is.

// Duplicate states of a transaction (Transaction.DupState); "" for every
// ordinary row.
const (
	// DupPossible: stored as a possible duplicate of Transaction.DupOf,
	// waiting for a person; it counts nowhere.
	DupPossible = "possible"
	// DupConfirmed: a person said it is the same transfer as DupOf; it
	// stays out for good.
	DupConfirmed = "duplicate"
	// DupDistinct: a person said it is a transfer of its own; it entered
	// totals, balances and matching then.
	DupDistinct = "distinct"
)

// DupCounts reports whether a transaction of duplicate state s counts in
// totals, balances and matching: every state but DupPossible and
// DupConfirmed.
func DupCounts(s string) bool { return s != DupPossible && s != DupConfirmed }

// ExceptionPossibleDuplicate: a transaction stored as a possible duplicate
// of another (Transaction.DupOf). Only ResolveDuplicate and ResolveDistinct
// resolve it.
const ExceptionPossibleDuplicate = "possible_duplicate"

// MaxDuplicateWindowDays bounds the company's duplicate window
// (CompanyConfig.DuplicateWindowDays).
const MaxDuplicateWindowDays = 7

// CheckDuplicateWindow checks a duplicate window in days (0 is the same day).
func CheckDuplicateWindow(days int) error {
	if days < 0 || days > MaxDuplicateWindowDays {
		return FieldError("duplicate_window_days", "duplicate_window_days must be a whole number of days from 0 (the same day) to %d, not %d", MaxDuplicateWindowDays, days)
	}
	return nil
}

// DupMemo is a memo as possible duplicates compare it: the normalisation
// of payment codes (NormalizeMemo: no diacritics, upper case) without any
// white space.
func DupMemo(memo string) string {
	return strings.Join(strings.Fields(NormalizeMemo(memo)), "")
}

// DupKey is the key under which a transaction is stored for the look-up of
// possible duplicates (transactions.dup_key, migration 00044): its day (the
// day number of its wall-clock date, days since 1970-01-01) in the high
// bits, and in the low 40 bits a hash of its direction and amount and its
// memo (DupMemo). The day leads so that a day's new rows fill one region
// of the index instead of pages all over it; a look-up asks for the key of
// each day of the window (DupKeyOn). Equal keys are candidates, compared
// again in full (a hash of 40 bits collides).
func DupKey(day, amountIn, amountOut int64, memo string) int64 {
	h := fnv.New64a()
	h.Write([]byte(strconv.FormatInt(amountIn, 10)))
	h.Write([]byte{'|'})
	h.Write([]byte(strconv.FormatInt(amountOut, 10)))
	h.Write([]byte{'|'})
	h.Write([]byte(DupMemo(memo)))
	return DupKeyOn(int64(h.Sum64()), day)
}

// dupHashBits are the bits of DupKey that hold the hash.
const dupHashBits = 40

// DupKeyOn is the key k (a DupKey) would have on another day.
func DupKeyOn(k, day int64) int64 {
	return day<<dupHashBits | k&(1<<dupHashBits-1)
}

// The parts of a possible duplicate's reason (DupReason).
const (
	dupReasonPrefix = "possible duplicate of transaction "
	dupReasonMemo   = ": same account, direction, amount and memo, dated within the duplicate window"
	dupReasonRef    = ": same account, direction and amount, dated within the duplicate window, sharing a reference"
)

// DupReason is the sentence of a possible duplicate's exception, naming the
// first row; ParseDupReason reads it back.
func DupReason(firstID int64, byReference bool) string {
	if byReference {
		return dupReasonPrefix + strconv.FormatInt(firstID, 10) + dupReasonRef
	}
	return dupReasonPrefix + strconv.FormatInt(firstID, 10) + dupReasonMemo
}

// ParseDupReason reads a DupReason sentence back: the first row and whether
// a shared reference told it; ok is false for any other sentence.
func ParseDupReason(s string) (firstID int64, byReference, ok bool) {
	rest, found := strings.CutPrefix(s, dupReasonPrefix)
	if !found {
		return 0, false, false
	}
	n := strings.IndexByte(rest, ':')
	if n < 0 {
		return 0, false, false
	}
	id, err := strconv.ParseInt(rest[:n], 10, 64)
	if err != nil || (rest[n:] != dupReasonMemo && rest[n:] != dupReasonRef) {
		return 0, false, false
	}
	return id, rest[n:] == dupReasonRef, true
}
