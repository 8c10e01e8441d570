package pgstore

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
)

// KeySize is the length of a store key: AES-256.
const KeySize = 32

// Keys seal the documents at rest (AES-256-GCM, the document's name as
// additional data, so a sealed value moved to another row does not open).
// Current seals; Old, the keys of before a rotation, only open what was
// sealed before it.
type Keys struct {
	Current []byte
	Old     [][]byte
}

// ParseKey reads a key file's content: the base64 of KeySize random
// bytes (`head -c 32 /dev/urandom | base64`), surrounding space allowed.
// Errors never quote the content.
func ParseKey(data []byte) ([]byte, error) {
	text := bytes.TrimSpace(data)
	if len(text) == 0 {
		return nil, errors.New("the key file is empty: write the base64 of 32 random bytes into it (`head -c 32 /dev/urandom | base64`)")
	}
	key := make([]byte, base64.StdEncoding.DecodedLen(len(text)))
	n, err := base64.StdEncoding.Decode(key, text)
	if err != nil {
		return nil, errors.New("the key file is not base64: write the base64 of 32 random bytes into it (`head -c 32 /dev/urandom | base64`)")
	}
	if n != KeySize {
		return nil, fmt.Errorf("the key file holds %d bytes, not %d: write the base64 of 32 random bytes into it (`head -c 32 /dev/urandom | base64`)", n, KeySize)
	}
	return key[:n], nil
}

// ReadKeyFile reads and parses a key file.
func ReadKeyFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the store key: %w", err)
	}
	key, err := ParseKey(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return key, nil
}

// LoadKeys reads the current key file and the old ones.
func LoadKeys(current string, old ...string) (Keys, error) {
	var k Keys
	var err error
	if current == "" {
		return k, errors.New("a database store needs a key to seal the secrets with: give --store-key-file")
	}
	if k.Current, err = ReadKeyFile(current); err != nil {
		return k, err
	}
	for _, p := range old {
		o, err := ReadKeyFile(p)
		if err != nil {
			return k, err
		}
		k.Old = append(k.Old, o)
	}
	return k, nil
}

// sealed values start with magic, then the key's id, then the nonce.
const (
	magic   = "PX1"
	idSize  = 8
	minSize = len(magic) + idSize + 12 + 16 // + GCM nonce and tag
)

// keyID names a key without revealing it.
func keyID(key []byte) []byte {
	sum := sha256.Sum256(append([]byte("plexus store key id\x00"), key...))
	return sum[:idSize]
}

func gcm(key []byte) (cipher.AEAD, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

// seal encrypts plain for the document name under the current key.
func (k Keys) seal(name string, plain []byte) ([]byte, error) {
	a, err := gcm(k.Current)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, minSize+len(plain))
	out = append(out, magic...)
	out = append(out, keyID(k.Current)...)
	nonce := make([]byte, a.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	out = append(out, nonce...)
	return a.Seal(out, nonce, plain, []byte(name)), nil
}

// ErrNoKey says a value was sealed under a key that was not given.
var ErrNoKey = errors.New("sealed under a key that was not given: pass the key it was sealed with (--store-key-file, or --store-old-key-file during a rotation)")

// open decrypts a sealed value of the document name. current reports
// whether it was sealed under the current key (else a rotation re-seals
// it).
func (k Keys) open(name string, sealed []byte) (plain []byte, current bool, err error) {
	if len(sealed) < minSize || string(sealed[:len(magic)]) != magic {
		return nil, false, fmt.Errorf("%s: the stored value is not sealed by plexus", name)
	}
	id := sealed[len(magic) : len(magic)+idSize]
	rest := sealed[len(magic)+idSize:]
	for i, key := range append([][]byte{k.Current}, k.Old...) {
		if !bytes.Equal(keyID(key), id) {
			continue
		}
		a, err := gcm(key)
		if err != nil {
			return nil, false, err
		}
		ns := a.NonceSize()
		plain, err := a.Open(nil, rest[:ns], rest[ns:], []byte(name))
		if err != nil {
			return nil, false, fmt.Errorf("%s: the stored value does not open under its key: it was changed, or moved from another row", name)
		}
		return plain, i == 0, nil
	}
	return nil, false, fmt.Errorf("%s: %w", name, ErrNoKey)
}
