package users

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// credentials are the user's password for this pass: the password and its Secret's version, or
// why there is none to set (problem, or pending: the generated Secret is not there yet); and the
// generated Secret to return as the child (nil with spec.passwordSecret). The password lives as
// long as the pass; nothing logs, stores or returns it but the generated Secret.
type credentials struct {
	password string
	version  string
	secret   string // the Secret's name
	problem  string
	pending  bool
	child    map[string]any
}

// maxPasswordBytes is bcrypt's limit: it reads 72 bytes of a password and ignores the rest.
const maxPasswordBytes = 72

// credentialsOf reads the password of u: spec.passwordSecret's, or the generated Secret's —
// observed among the children when it answers the current rotation request (the annotation
// memgraph.com/rotate-password), else a new one, returned as the child and set once observed.
func (ctl *Controller) credentialsOf(u *v1alpha1.MemgraphUser, obs *observation) (credentials, error) {
	if ref := u.Spec.PasswordSecret; ref != nil {
		return suppliedPassword(u, ref.Name, obs.password), nil
	}
	name := v1alpha1.UserSecretName(u.Name)
	request := u.Annotations[v1alpha1.AnnotationRotatePassword]
	if g := obs.generated; g != nil && g.Metadata.Annotations[v1alpha1.AnnotationRotatedFor] == request {
		if password, ok := decoded(g.Data[v1alpha1.UserPasswordKey]); ok && password != "" {
			ctl.generated.Forget(generationKey(u, request))
			child, err := topology.UserSecret(u, obs.cluster, password, request)
			return credentials{password: password, version: name + "/" + g.Metadata.ResourceVersion, secret: name, child: child}, err
		}
	}
	password, err := ctl.generated.Get(generationKey(u, request), ctl.cfg.NewPassword)
	if err != nil {
		return credentials{}, fmt.Errorf("generate a password for MemgraphUser %s: %w", u.Name, err)
	}
	child, err := topology.UserSecret(u, obs.cluster, password, request)
	return credentials{secret: name, pending: true, child: child}, err
}

// suppliedPassword reads spec.passwordSecret's password; a problem names the Secret and what is
// wrong, never its content.
func suppliedPassword(u *v1alpha1.MemgraphUser, name string, s *secret) credentials {
	where := fmt.Sprintf("Secret %s/%s (spec.passwordSecret)", u.Namespace, name)
	out := credentials{secret: name}
	if s == nil {
		out.problem = where + " does not exist: create it with the key password; the user is created once it exists"
		return out
	}
	password, ok := decoded(s.Data[v1alpha1.UserPasswordKey])
	switch {
	case !ok:
		out.problem = where + " has a password that is not valid base64"
	case password == "":
		out.problem = where + " has no password: it needs the key password"
	case len(password) > maxPasswordBytes:
		out.problem = fmt.Sprintf("%s has a password of %d bytes: Memgraph keeps a password as a bcrypt hash, which reads "+
			"%d bytes at most; choose a shorter one", where, len(password), maxPasswordBytes)
	default:
		out.password, out.version = password, name+"/"+s.Metadata.ResourceVersion
	}
	return out
}

func decoded(v string) (string, bool) {
	raw, err := base64.StdEncoding.DecodeString(v)
	return string(raw), err == nil
}

// generationKey names one generated password: the user (by uid, so a user created again under
// the same name gets another) and the rotation request it answers.
func generationKey(u *v1alpha1.MemgraphUser, request string) string {
	return u.Namespace + "/" + u.Name + "/" + string(u.UID) + "/" + request
}

// passwordAlphabet are the characters of a generated password: letters and digits, which every
// client and shell takes as they are.
const passwordAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// NewPassword is 32 characters drawn from passwordAlphabet with crypto/rand: about 190 bits.
func NewPassword() (string, error) {
	b := make([]byte, 32)
	for i := range b {
		b[i] = passwordAlphabet[randIndex(len(passwordAlphabet))]
	}
	return string(b), nil
}

// randIndex is a uniform index below n (rand.Text's method: rejection of the biased top).
func randIndex(n int) int {
	limit := 256 - 256%n
	var one [1]byte
	for {
		_, _ = rand.Read(one[:]) // crypto/rand.Read never fails (Go 1.24+)
		if int(one[0]) < limit {
			return int(one[0]) % n
		}
	}
}
