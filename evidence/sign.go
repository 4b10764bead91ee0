package evidence

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"io"
	"strconv"
)

// headSignaturePrefix starts every signed head message. It names what is
// signed and the version of the message layout (domain separation: a
// signature made for a browsergate head can never be taken for a
// signature over anything else made with the same key, and a v2 layout
// cannot be confused with v1).
const headSignaturePrefix = "browsergate-evidence-head-v1\n"

// HeadMessage returns the bytes a head signature is over:
//
//	"browsergate-evidence-head-v1\n" + session + "\n" + seq + "\n" + hash
//
// with seq in decimal ASCII without leading zeros and hash the lowercase
// hex SHA-256 of the session's last record. A session id may itself
// contain "\n", but seq and hash cannot, so reading the message from its
// end gives back exactly one (session, seq, hash): no two heads share a
// message.
func HeadMessage(session string, seq uint64, hash string) []byte {
	b := make([]byte, 0, len(headSignaturePrefix)+len(session)+len(hash)+22)
	b = append(b, headSignaturePrefix...)
	b = append(b, session...)
	b = append(b, '\n')
	b = strconv.AppendUint(b, seq, 10)
	b = append(b, '\n')
	return append(b, hash...)
}

// KeyID returns the identifier browsergate records beside a signature and
// prints for a key: the lowercase hex SHA-256 of the key's PKIX (DER)
// encoding, which is also what
// `openssl pkey -pubin -in KEY.pub -outform DER | sha256sum` prints. It is
// "" for a key that is not an ed25519 public key.
func KeyID(pub ed25519.PublicKey) string {
	if len(pub) != ed25519.PublicKeySize {
		return ""
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return ""
	}
	return sha256Hex(der)
}

// GenerateKey creates an ed25519 key pair for signing heads, from random
// (crypto/rand.Reader when nil), and returns the private key as a PKCS #8
// PEM block ("PRIVATE KEY") and the public key as a PKIX PEM block
// ("PUBLIC KEY"): the formats `openssl genpkey -algorithm ed25519` and
// `openssl pkey -pubout` write, so either tool can make or read the keys.
func GenerateKey(random io.Reader) (privPEM, pubPEM []byte, err error) {
	pub, priv, err := ed25519.GenerateKey(random)
	if err != nil {
		return nil, nil, fmt.Errorf("generate signing key: %w", err)
	}
	privDER, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, nil, fmt.Errorf("generate signing key: %w", err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, nil, fmt.Errorf("generate signing key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: privDER}),
		pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), nil
}

// ParsePrivateKey reads an ed25519 private key from a PKCS #8 PEM block
// ("PRIVATE KEY"), as GenerateKey and openssl write it.
func ParsePrivateKey(data []byte) (ed25519.PrivateKey, error) {
	der, err := pemBlock(data, "PRIVATE KEY")
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadKey, err)
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%w: PKCS #8 key is a %T", ErrBadKey, k)
	}
	return priv, nil
}

// ParsePublicKey reads an ed25519 public key from a PKIX PEM block
// ("PUBLIC KEY"), as GenerateKey and openssl write it.
func ParsePublicKey(data []byte) (ed25519.PublicKey, error) {
	der, err := pemBlock(data, "PUBLIC KEY")
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadKey, err)
	}
	pub, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("%w: PKIX key is a %T", ErrBadKey, k)
	}
	return pub, nil
}

// pemBlock returns the bytes of the first PEM block of data, which must be
// of type typ: a public key where a private one is expected (or the
// reverse) is a mistake worth naming.
func pemBlock(data []byte, typ string) ([]byte, error) {
	b, _ := pem.Decode(data)
	if b == nil {
		return nil, fmt.Errorf("%w: no PEM block", ErrBadKey)
	}
	if b.Type != typ {
		return nil, fmt.Errorf("%w: PEM block is %q, want %q", ErrBadKey, b.Type, typ)
	}
	return b.Bytes, nil
}

// head is the value stored in the heads bucket: the session's last seq and
// hash and, when the store signs, the signature over HeadMessage and the
// id of the key that made it.
type head struct {
	Hash string `json:"hash"`
	Key  string `json:"key,omitempty"` // KeyID of the signing key
	Seq  uint64 `json:"seq"`
	Sig  string `json:"sig,omitempty"` // lowercase hex ed25519 signature
}

// encode writes h in canonical JSON (members in key order; every value is
// hex or a number, so nothing needs escaping). An unsigned head encodes
// exactly as before signing existed.
func (h head) encode() []byte {
	b := fmt.Appendf(nil, `{"hash":%s`, strconv.Quote(h.Hash))
	if h.Key != "" {
		b = fmt.Appendf(b, `,"key":%s`, strconv.Quote(h.Key))
	}
	b = fmt.Appendf(b, `,"seq":%d`, h.Seq)
	if h.Sig != "" {
		b = fmt.Appendf(b, `,"sig":%s`, strconv.Quote(h.Sig))
	}
	return append(b, '}')
}

// signHead returns h signed with key (h unchanged when key is nil).
func signHead(session string, h head, key ed25519.PrivateKey, keyID string) head {
	if key == nil {
		return h
	}
	h.Key = keyID
	h.Sig = hex.EncodeToString(ed25519.Sign(key, HeadMessage(session, h.Seq, h.Hash)))
	return h
}

// headSigned reports whether h's signature is pub's over h's session,
// seq and hash.
func headSigned(pub ed25519.PublicKey, session string, seq uint64, hash, sigHex string) bool {
	sig, err := hex.DecodeString(sigHex)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return false
	}
	return ed25519.Verify(pub, HeadMessage(session, seq, hash), sig)
}
