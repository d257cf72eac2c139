package attrs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"
)

// File is a Store in one JSON file shared by the test "nodes" of one machine, with the same
// semantics as the CIB: one namespace of node attributes and one claim, updated under a lock.
type File struct {
	Path string
}

type fileState struct {
	Nodes     map[string]map[string]string `json:"nodes"`
	Transient map[string]map[string]string `json:"transient"`
	Claim     string                       `json:"claim,omitempty"`
	Cluster   map[string]string            `json:"cluster,omitempty"`
}

func (st *fileState) section(lt Lifetime) map[string]map[string]string {
	if lt == Reboot {
		return st.Transient
	}
	return st.Nodes
}

// update runs fn on the state under an exclusive lock and writes it back (temp file + rename)
// when fn reports a change.
func (f File) update(fn func(*fileState) (changed bool, err error)) error {
	lock, err := os.OpenFile(f.Path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return err
	}
	st := fileState{Nodes: map[string]map[string]string{}, Transient: map[string]map[string]string{}}
	data, err := os.ReadFile(f.Path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return err
	default:
		if err := json.Unmarshal(data, &st); err != nil {
			return fmt.Errorf("%s: %w", f.Path, err)
		}
		if st.Nodes == nil {
			st.Nodes = map[string]map[string]string{}
		}
		if st.Transient == nil {
			st.Transient = map[string]map[string]string{}
		}
	}
	changed, err := fn(&st)
	if err != nil || !changed {
		return err
	}
	out, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(f.Path, out, 0o600)
}

func (f File) Get(_ context.Context, node, name string, lt Lifetime) (v string, ok bool, err error) {
	err = f.update(func(st *fileState) (bool, error) {
		v, ok = st.section(lt)[node][name]
		return false, nil
	})
	return v, ok, err
}

func (f File) Set(_ context.Context, node, name, value string, lt Lifetime) error {
	return f.update(func(st *fileState) (bool, error) {
		sec := st.section(lt)
		if value == "" {
			delete(sec[node], name)
			return true, nil
		}
		if sec[node] == nil {
			sec[node] = map[string]string{}
		}
		sec[node][name] = value
		return true, nil
	})
}

// ReportFailure records the failure as node attribute FailedName(resource) (a count).
func (f File) ReportFailure(_ context.Context, node, resource string) error {
	return f.update(func(st *fileState) (bool, error) {
		sec := st.section(Reboot)
		if sec[node] == nil {
			sec[node] = map[string]string{}
		}
		n, _ := strconv.Atoi(sec[node][FailedName(resource)])
		sec[node][FailedName(resource)] = strconv.Itoa(n + 1)
		return true, nil
	})
}

// NodeLeft drops a node's reboot-lifetime attributes, as the cluster does when a node is fenced
// or reboots.
func (f File) NodeLeft(node string) error {
	return f.update(func(st *fileState) (bool, error) {
		delete(st.Transient, node)
		return true, nil
	})
}

func (f File) Property(_ context.Context, name string) (v string, ok bool, err error) {
	err = f.update(func(st *fileState) (bool, error) { v, ok = st.Cluster[name]; return false, nil })
	return v, ok, err
}

func (f File) SetProperty(_ context.Context, name, value string) error {
	return f.update(func(st *fileState) (bool, error) {
		if value == "" {
			delete(st.Cluster, name)
			return true, nil
		}
		if st.Cluster == nil {
			st.Cluster = map[string]string{}
		}
		st.Cluster[name] = value
		return true, nil
	})
}

func (f File) Holder(context.Context) (h string, err error) {
	err = f.update(func(st *fileState) (bool, error) { h = st.Claim; return false, nil })
	return h, err
}

func (f File) Claim(_ context.Context, owner, overrideFrom string) (h string, err error) {
	err = f.update(func(st *fileState) (bool, error) {
		if st.Claim == "" || (overrideFrom != "" && st.Claim == overrideFrom) {
			st.Claim = owner
		}
		h = st.Claim
		return true, nil
	})
	return h, err
}

func (f File) Release(_ context.Context, owner string) error {
	return f.update(func(st *fileState) (bool, error) {
		if st.Claim != owner {
			return false, nil
		}
		st.Claim = ""
		return true, nil
	})
}
