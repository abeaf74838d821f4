package sqlstore

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Secrets that the server must read back (merchant secret keys, which sign
// checkout forms; IPN secrets and signing secrets, which are sent) are sealed
// with AES-256-GCM before they are stored. The key is not in the database
// (docs/design.md, D9): it comes from a key file or RECON_SECRET_KEY (see
// secretkey.go), so a copy of the database alone reveals no secret. Secrets
// that are only checked (passwords, client secrets, tokens) are stored as
// hashes instead.
//
// A sealed value is
//
//	0x02 | key id (4 bytes, big endian) | nonce (12 bytes) | ciphertext and tag
//
// The key id says which key of the ring opens it, so that a rotation can
// re-seal under a new key while the old one still opens what is not yet
// re-sealed. The additional data is the 5-byte header followed by the
// value's binding (sealBinding): its table, column, row and tenant. A
// sealed value copied into another row, another tenant's or another
// column, by someone who can write the database but has no key, no longer
// opens: the copy fails loudly instead of lending one tenant's secret to
// another (ARCHITECTURE.md, Secrets bound to their rows).
//
// Values of version 0x01 (before migration 00020) had only the header as
// additional data. UseSecretKey re-seals them bound, once, in one
// transaction (bindSealed); after it, a version-1 value is refused.

const (
	sealUnbound    = 1 // before migration 00020: not bound to its row
	sealBound      = 2 // bound to its row (sealBinding)
	sealHeaderSize = 5
	keySize        = 32
)

// sealBinding names the one cell a sealed value may be opened from: its
// table, its column, and its row, which is also its tenant's: every sealed
// value lives in a row whose primary key is natural and known before the
// INSERT, merchants (company_id) and delivery_targets (company_id, kind),
// so a value is sealed for its row before the row exists, in the same
// statement that writes it, and no insert-then-update is needed. A new
// table holding sealed values must keep that property (or bind to another
// key it knows before writing) and be listed in sealedCells.
type sealBinding struct {
	table, column string
	companyID     int64
	kind          string // delivery_targets.kind; "" in merchants
}

func merchantBinding(companyID int64) sealBinding {
	return sealBinding{table: "merchants", column: "secret_key", companyID: companyID}
}

func targetBinding(column string, companyID int64, kind string) sealBinding {
	return sealBinding{table: "delivery_targets", column: column, companyID: companyID, kind: kind}
}

func (b sealBinding) String() string {
	if b.kind == "" {
		return fmt.Sprintf("%s.%s of company %d", b.table, b.column, b.companyID)
	}
	return fmt.Sprintf("%s.%s of company %d, kind %s", b.table, b.column, b.companyID, b.kind)
}

// additionalData is the AEAD's additional data of a bound value: the header,
// then the binding's fields, each NUL-terminated (none holds a NUL: table
// and column names are the store's constants, kinds recon.DeliveryKinds).
func (b sealBinding) additionalData(header []byte) []byte {
	ad := append([]byte(nil), header...)
	ad = append(ad, "recon sealed secret\x00"...)
	for _, f := range []string{b.table, b.column, strconv.FormatInt(b.companyID, 10), b.kind} {
		ad = append(append(ad, f...), 0)
	}
	return ad
}

// keyRing holds the sealing keys by id. The database's secret_key_state
// names the one new secrets are sealed under; the others only open.
type keyRing struct {
	keys map[uint32][]byte
}

func newKeyRing() *keyRing { return &keyRing{keys: map[uint32][]byte{}} }

// ids returns the key ids, smallest first.
func (r *keyRing) ids() []uint32 {
	ids := make([]uint32, 0, len(r.keys))
	for id := range r.keys {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// newest returns the largest key id (0 for an empty ring).
func (r *keyRing) newest() uint32 {
	var max uint32
	for id := range r.keys {
		max = maxU32(max, id)
	}
	return max
}

func maxU32(a, b uint32) uint32 {
	if a > b {
		return a
	}
	return b
}

// idOf returns the id of key in the ring, or 0.
func (r *keyRing) idOf(key []byte) uint32 {
	for id, k := range r.keys {
		if hmac.Equal(k, key) {
			return id
		}
	}
	return 0
}

// parseKeyRing reads keys written as "ID:BASE64" (standard base64 of 32
// bytes), separated by white space or commas; lines starting with # are
// comments. A lone key without "ID:" is key 1. what names the source in
// errors, which never quote a key.
func parseKeyRing(text, what string) (*keyRing, error) {
	r := newKeyRing()
	var entries []string
	for line := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		entries = append(entries, strings.FieldsFunc(line, func(c rune) bool {
			return c == ',' || c == ' ' || c == '\t' || c == '\r'
		})...)
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("%s holds no key", what)
	}
	for n, e := range entries {
		idText, b64, ok := strings.Cut(e, ":")
		if !ok {
			if len(entries) > 1 {
				return nil, fmt.Errorf("%s: entry %d is not ID:KEY", what, n+1)
			}
			idText, b64 = "1", e
		}
		id, err := strconv.ParseUint(idText, 10, 32)
		if err != nil || id == 0 {
			return nil, fmt.Errorf("%s: entry %d: the key id must be a whole number from 1", what, n+1)
		}
		key, err := base64.StdEncoding.DecodeString(b64)
		if err != nil || len(key) != keySize {
			return nil, fmt.Errorf("%s: key %d must be %d bytes in standard base64 (e.g. openssl rand -base64 32)", what, id, keySize)
		}
		if _, dup := r.keys[uint32(id)]; dup {
			return nil, fmt.Errorf("%s: key %d is given twice", what, id)
		}
		r.keys[uint32(id)] = key
	}
	return r, nil
}

// format writes the ring as a key file.
func (r *keyRing) format() []byte {
	var b strings.Builder
	b.WriteString("# Recon secret key file: the keys that seal merchant secrets, IPN secrets and\n")
	b.WriteString("# signing secrets in the database. Keep it out of database backups and back it\n")
	b.WriteString("# up on its own: without it those secrets cannot be read. One key a line,\n")
	b.WriteString("# ID:BASE64. Change it only with `recon keys rotate`.\n")
	for _, id := range r.ids() {
		fmt.Fprintf(&b, "%d:%s\n", id, base64.StdEncoding.EncodeToString(r.keys[id]))
	}
	return []byte(b.String())
}

// fingerprint identifies a key without revealing it: HMAC-SHA256 under the
// key of a fixed text. It is stored in the database to detect a wrong key
// file; finding the key from it is as hard as breaking HMAC-SHA256.
func fingerprint(key []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("recon secret key fingerprint v1"))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

// sealer is the DB's loaded key ring; reload re-reads the key file when a
// value or the database names a key the ring lacks (after a rotation by
// another process).
type sealer struct {
	mu     sync.Mutex
	ring   *keyRing
	aeads  map[uint32]cipher.AEAD
	source KeySource
}

func (s *sealer) set(ring *keyRing, src KeySource) error {
	aeads := map[uint32]cipher.AEAD{}
	for id, key := range ring.keys {
		block, err := aes.NewCipher(key)
		if err != nil {
			return err
		}
		if aeads[id], err = cipher.NewGCM(block); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ring, s.aeads, s.source = ring, aeads, src
	return nil
}

// aead returns the cipher of key id, re-reading a key file once if the ring
// lacks it.
func (s *sealer) aead(id uint32) (cipher.AEAD, error) {
	s.mu.Lock()
	a, ok := s.aeads[id]
	src, loaded := s.source, s.ring != nil
	s.mu.Unlock()
	switch {
	case ok:
		return a, nil
	case !loaded:
		return nil, fmt.Errorf("no secret key loaded (UseSecretKey was not called)")
	case src.File == "":
		return nil, fmt.Errorf("secret key %d is not in RECON_SECRET_KEY: give every node the keys of the current key file", id)
	}
	ring, err := readKeyFile(src.File)
	if err != nil {
		return nil, err
	}
	if ring == nil || ring.keys[id] == nil {
		return nil, fmt.Errorf("secret key %d is not in the key file %s: copy the key file from where `recon keys rotate` last ran", id, src.File)
	}
	if err := s.set(ring, src); err != nil {
		return nil, err
	}
	return s.aead(id)
}

// currentKeyID reads, within a write transaction, the id of the key new
// secrets are sealed under, locking it (PostgreSQL) so that a rotation
// cannot commit between this read and the caller's write: every value is
// either sealed before the rotation (and re-sealed by it) or after it,
// under the new key.
func (db *DB) currentKeyID(ctx context.Context, q querier) (uint32, error) {
	var id int64
	if err := q.QueryRowContext(ctx, `SELECT key_id FROM secret_key_state WHERE id = 1`+db.d.forUpdate()).Scan(&id); err != nil {
		return 0, internal(err, "read the current secret key id (was UseSecretKey called?)")
	}
	return uint32(id), nil
}

// sealSecret encrypts s for the cell b under the current key, within the
// write transaction q.
func (db *DB) sealSecret(ctx context.Context, q querier, b sealBinding, s string) ([]byte, error) {
	id, err := db.currentKeyID(ctx, q)
	if err != nil {
		return nil, err
	}
	return db.sealWith(id, b, s)
}

func (db *DB) sealWith(id uint32, b sealBinding, s string) ([]byte, error) {
	aead, err := db.seal.aead(id)
	if err != nil {
		return nil, internal(err, "seal secret")
	}
	out := make([]byte, sealHeaderSize+aead.NonceSize(), sealHeaderSize+aead.NonceSize()+len(s)+aead.Overhead())
	out[0] = sealBound
	binary.BigEndian.PutUint32(out[1:sealHeaderSize], id)
	if _, err := io.ReadFull(db.rand, out[sealHeaderSize:]); err != nil {
		return nil, internal(err, "seal secret")
	}
	return aead.Seal(out, out[sealHeaderSize:], []byte(s), b.additionalData(out[:sealHeaderSize])), nil
}

// sealedHeader returns the version and key id of a sealed value.
func sealedHeader(b []byte) (version byte, id uint32, err error) {
	if len(b) < sealHeaderSize || (b[0] != sealBound && b[0] != sealUnbound) {
		return 0, 0, fmt.Errorf("sealed secret of %d bytes in an unknown format", len(b))
	}
	return b[0], binary.BigEndian.Uint32(b[1:sealHeaderSize]), nil
}

// sealedKeyID returns the id of the key that sealed b.
func sealedKeyID(b []byte) (uint32, error) {
	_, id, err := sealedHeader(b)
	return id, err
}

// openSecret decrypts what sealSecret stored for the cell b. A value sealed
// for another cell (copied from another row, tenant or column), altered, or
// still in the unbound format of before migration 00020 is refused with an
// error saying so, never opened.
func (db *DB) openSecret(_ context.Context, b sealBinding, sealed []byte) (string, error) {
	version, id, err := sealedHeader(sealed)
	if err != nil {
		return "", internal(err, "open the secret in "+b.String())
	}
	if version != sealBound {
		return "", internal(fmt.Errorf("it is sealed in the format of before version 00020, not bound to its row, and the start-up re-seal is done: it was written after the upgrade by an older Recon, or copied in"), "open the secret in "+b.String())
	}
	aead, err := db.seal.aead(id)
	if err != nil {
		return "", internal(err, "open the secret in "+b.String())
	}
	plain, err := openNonced(aead, sealed[sealHeaderSize:], b.additionalData(sealed[:sealHeaderSize]))
	if err != nil {
		return "", internal(fmt.Errorf("key %d does not open it for this row: it was sealed for another row, tenant or column, or altered: %w", id, err), "open the secret in "+b.String())
	}
	return plain, nil
}

// openUnbound decrypts a value of the unbound format (version 1), for the
// one re-seal that binds them (bindSealed).
func (db *DB) openUnbound(sealed []byte) (string, error) {
	version, id, err := sealedHeader(sealed)
	if err != nil {
		return "", err
	}
	if version != sealUnbound {
		return "", fmt.Errorf("not an unbound value")
	}
	aead, err := db.seal.aead(id)
	if err != nil {
		return "", err
	}
	plain, err := openNonced(aead, sealed[sealHeaderSize:], sealed[:sealHeaderSize])
	if err != nil {
		return "", fmt.Errorf("key %d does not open it: %w", id, err)
	}
	return plain, nil
}

// openNonced opens nonce || ciphertext with aead and the additional data ad.
func openNonced(aead cipher.AEAD, b, ad []byte) (string, error) {
	if len(b) < aead.NonceSize() {
		return "", fmt.Errorf("sealed secret of %d bytes", len(b))
	}
	plain, err := aead.Open(nil, b[:aead.NonceSize()], b[aead.NonceSize():], ad)
	return string(plain), err
}
