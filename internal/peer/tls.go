package peer

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"time"
)

// The channel is TLS 1.3. Each replica makes a key and a self-signed
// certificate at its start, and puts the certificate's SHA-256 in its row
// of the database, sealed with the store's key (pgstore): a replica
// dialling another takes only the certificate that row names. So the
// channel is encrypted, and a replica talks only to the replica its row
// names, whoever can write the database or sits on the network between.

// NewCertificate makes this replica's channel certificate and returns it
// with its SHA-256 (hex), which goes in its row.
func NewCertificate() (tls.Certificate, string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, "", err
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "plexus replica"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(10 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, "", err
	}
	sum := sha256.Sum256(der)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, hex.EncodeToString(sum[:]), nil
}

// ServerTLS is the channel's listener's TLS configuration.
func ServerTLS(cert tls.Certificate) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}
}

// dialTimeout bounds a dial of another replica: one that does not answer
// by then is taken for gone.
const dialTimeout = 2 * time.Second

// DirectTransport is the channel's base transport: straight to the
// replica, never through a proxy of the environment's; TLS that takes
// only the certificate of the replica the request is for, by the
// fingerprint find returns for it.
func DirectTransport(find func(ctx context.Context, id string) (Replica, error)) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	d := &net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}
	t.DialTLSContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		id, _ := ctx.Value(toKey{}).(string)
		rep, err := find(ctx, id)
		if err != nil {
			return nil, &notSentError{fmt.Errorf("dialing replica %s: %w", id, err)}
		}
		if rep.FP == "" {
			return nil, &notSentError{fmt.Errorf("replica %s names no certificate", id)}
		}
		want, err := hex.DecodeString(rep.FP)
		if err != nil {
			return nil, &notSentError{fmt.Errorf("replica %s names no certificate", id)}
		}
		raw, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, &notSentError{err}
		}
		conn := tls.Client(raw, &tls.Config{
			MinVersion:         tls.VersionTLS13,
			InsecureSkipVerify: true, // the certificate is pinned below, by its row
			VerifyConnection: func(cs tls.ConnectionState) error {
				if len(cs.PeerCertificates) == 0 {
					return errors.New("no certificate")
				}
				got := sha256.Sum256(cs.PeerCertificates[0].Raw)
				if subtle.ConstantTimeCompare(got[:], want) != 1 {
					return fmt.Errorf("the replica at %s is not %s: its certificate is not the one its row names", addr, id)
				}
				return nil
			},
		})
		hctx, cancel := context.WithTimeout(ctx, dialTimeout)
		defer cancel()
		if err := conn.HandshakeContext(hctx); err != nil {
			raw.Close()
			return nil, &notSentError{err}
		}
		return conn, nil
	}
	return t
}

// notSentError is a request that never reached the replica it was for.
type notSentError struct{ err error }

func (e *notSentError) Error() string { return e.err.Error() }
func (e *notSentError) Unwrap() error { return e.err }

// NotSent reports whether err is a request that never reached the
// replica: its dial or handshake failed, or the replica refused it before
// serving it (it does not run the server any more). Such a request was
// not made, and may be made again elsewhere.
func (e *notSentError) NotSent() bool { return true }

// NotSent reports whether err says a request on the channel was never
// made (notSentError, or a failed dial).
func NotSent(err error) bool {
	var ns *notSentError
	var op *net.OpError
	return errors.As(err, &ns) || errors.As(err, &op) && op.Op == "dial"
}
