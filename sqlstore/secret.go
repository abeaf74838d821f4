package sqlstore

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"fmt"
	"io"
	"sync"
)

// Secrets that the server must read back (merchant secret keys, which sign
// checkout forms; IPN and webhook secrets, which are sent) are sealed with
// AES-256-GCM under the server key "data" before they are stored: a copy of
// the database alone does not reveal them. Secrets that are only checked
// (passwords, client secrets, tokens) are stored as hashes instead.

type sealer struct {
	once sync.Once
	aead cipher.AEAD
	err  error
}

func (db *DB) cipher(ctx context.Context) (cipher.AEAD, error) {
	db.seal.once.Do(func() {
		key, err := db.ServerKey(ctx, "data", 32)
		if err != nil {
			db.seal.err = err
			return
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			db.seal.err = err
			return
		}
		db.seal.aead, db.seal.err = cipher.NewGCM(block)
	})
	return db.seal.aead, db.seal.err
}

// sealSecret encrypts s; the nonce is stored in front of the ciphertext.
func (db *DB) sealSecret(ctx context.Context, s string) ([]byte, error) {
	aead, err := db.cipher(ctx)
	if err != nil {
		return nil, internal(err, "seal secret")
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := io.ReadFull(db.rand, nonce); err != nil {
		return nil, internal(err, "seal secret")
	}
	return aead.Seal(nonce, nonce, []byte(s), nil), nil
}

// openSecret decrypts what sealSecret stored.
func (db *DB) openSecret(ctx context.Context, b []byte) (string, error) {
	aead, err := db.cipher(ctx)
	if err != nil {
		return "", internal(err, "open secret")
	}
	if len(b) < aead.NonceSize() {
		return "", internal(fmt.Errorf("sealed secret of %d bytes", len(b)), "open secret")
	}
	plain, err := aead.Open(nil, b[:aead.NonceSize()], b[aead.NonceSize():], nil)
	if err != nil {
		return "", internal(err, "open secret")
	}
	return string(plain), nil
}
