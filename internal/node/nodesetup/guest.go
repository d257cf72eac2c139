package nodesetup

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tnf-layer/tnf-layer/internal/base/fsutil"
	"github.com/tnf-layer/tnf-layer/internal/node/pacemaker/pcmk"
)

// The cluster-etcd-operator's own two-node jobs (a DualReplica cluster) set Pacemaker up with
// `pcs cluster setup TNF ...` and run etcd through the field's agent (pkg/tnf/pkg/pcs). They
// run again on every upgrade of the operator and whenever a fencing credential changes, and
// delete every fence device they did not create, so a configuration laid over theirs would lose
// its fencing at the next run: on such a node the layer is a guest, which watches the operator's
// configuration and never writes it.
const (
	operatorClusterName = "TNF"
	operatorEtcdAgent   = "podman-etcd"
)

// GuestMarker holds why this node is a guest (operatorConfigured's reason). A node the operator
// configured once stays a guest: its jobs come back at the next upgrade or Secret change.
const GuestMarker = "/var/lib/tnf/guest"

// operatorConfigured says why this node's Corosync or Pacemaker configuration is the
// operator's, not the layer's to write ("" when it is not): a corosync.conf naming the
// operator's cluster (operatorCorosync), or a CIB whose etcd runs through the operator's agent.
// A file that cannot be read is an error, never "no cluster".
func operatorConfigured(corosyncConf, cib, clusterName string) (string, error) {
	if why, err := operatorCorosync(corosyncConf, clusterName); err != nil || why != "" {
		return why, err
	}
	primitive, err := cibPrimitive(cib, operatorEtcdAgent)
	if err != nil || primitive == "" {
		return "", err
	}
	return fmt.Sprintf("%s runs resource %q with ocf:heartbeat:%s, as the cluster-etcd-operator's two-node jobs set it up (a DualReplica cluster)",
		cib, primitive, operatorEtcdAgent), nil
}

// operatorCorosync says why corosync.conf is the operator's ("" when it is not): it names the
// operator's cluster, and cluster.yaml (clusterName) another. Any other corosync.conf is the
// layer's to replace (Debian's package ships one naming cluster "debian").
func operatorCorosync(corosyncConf, clusterName string) (string, error) {
	name, err := corosyncClusterName(corosyncConf)
	if err != nil || name != operatorClusterName || clusterName == operatorClusterName {
		return "", err
	}
	return fmt.Sprintf("%s names cluster %q, which the cluster-etcd-operator's two-node jobs set up (a DualReplica cluster)", corosyncConf, name), nil
}

// Guest says why this node is a guest ("" when it is not), for the checks that may run before
// setup has (the boot's): GuestMarker's reason, or the operator's corosync.conf. The CIB, which
// only Pacemaker's user reads, is setup's to look at (becomeGuest): the operator's jobs always
// write both.
func Guest(clusterName string) (string, error) {
	if why, err := recordedGuest(); err != nil || why != "" {
		return why, err
	}
	return operatorCorosync(CorosyncConf, clusterName)
}

// recordedGuest is GuestMarker's reason ("" without the marker); a marker without one still
// makes a guest.
func recordedGuest() (string, error) {
	data, err := os.ReadFile(GuestMarker)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", nil
	case err != nil:
		return "", err
	}
	if why := strings.TrimSpace(string(data)); why != "" {
		return why, nil
	}
	return "recorded in " + GuestMarker, nil
}

// becomeGuest records that this node is a guest, and why, when its files say it is one: it
// reports whether it is.
func becomeGuest(clusterName string, step func(string, string)) (bool, error) {
	why, err := Guest(clusterName)
	if err == nil && why == "" {
		why, err = operatorConfigured(CorosyncConf, filepath.Join(pcmk.CIBDir, "cib.xml"), clusterName)
	}
	if err != nil || why == "" {
		return false, err
	}
	return true, recordGuest(why, step)
}

// recordGuest writes GuestMarker with why, and takes away the record of a completed setup: the
// unit that reconfigures the layer's own cluster (tnf-reconfigure) runs only with it
// (tnf-auto-unblock runs with either record).
func recordGuest(why string, step func(string, string)) error {
	if err := os.MkdirAll(filepath.Dir(GuestMarker), 0o755); err != nil {
		return err
	}
	if err := fsutil.WriteFileAtomic(GuestMarker, []byte(why+"\n"), 0o644); err != nil {
		return err
	}
	if err := fsutil.RemoveIfExists(Marker); err != nil {
		return err
	}
	step("guest", why+"; the layer watches this configuration and writes none of it")
	return nil
}

// corosyncClusterName reads totem's cluster_name ("" without the file). corosync.conf is not
// a format any Go library reads; the one key needed is a line of its own.
func corosyncClusterName(path string) (string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if key, value, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":"); ok && strings.TrimSpace(key) == "cluster_name" {
			return strings.TrimSpace(value), nil
		}
	}
	return "", sc.Err()
}

// cibPrimitive is the id of the first primitive of the CIB at path whose type is agent ("" when
// none, or without the file).
func cibPrimitive(path, agent string) (string, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	d := xml.NewDecoder(f)
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return "", nil
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
		if el, ok := tok.(xml.StartElement); ok && el.Name.Local == "primitive" {
			var id, typ string
			for _, a := range el.Attr {
				switch a.Name.Local {
				case "id":
					id = a.Value
				case "type":
					typ = a.Value
				}
			}
			if typ == agent {
				return id, nil
			}
		}
	}
}
