package nodesetup

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// The cluster-etcd-operator's own two-node jobs (a DualReplica cluster) set Pacemaker up with
// `pcs cluster setup TNF ...` and run etcd through the field's agent (pkg/tnf/pkg/pcs). They
// run again on every upgrade of the operator and whenever a fencing credential changes, and
// delete every fence device they did not create, so a configuration laid over theirs would lose
// its fencing at the next run: the layer refuses such a node instead.
const (
	operatorClusterName = "TNF"
	operatorEtcdAgent   = "podman-etcd"
)

// foreignCluster says why this node's Corosync or Pacemaker configuration is the operator's,
// not the layer's to write ("" when it is not): a corosync.conf naming the operator's cluster,
// or a CIB whose etcd runs through the operator's agent. Any other corosync.conf is the layer's
// to replace (Debian's package ships one naming cluster "debian"). A file that cannot be read is
// an error, never "no cluster".
func foreignCluster(corosyncConf, cib, clusterName string) (string, error) {
	name, err := corosyncClusterName(corosyncConf)
	if err != nil {
		return "", err
	}
	operator := func(what string) string {
		return what + ": the cluster-etcd-operator's two-node jobs set this cluster up (a DualReplica cluster). " +
			"The layer does not configure a second cluster over it: those jobs run again at every operator upgrade and " +
			"delete the fence devices they did not make. Install the layer on a cluster whose operator does not run them"
	}
	if name == operatorClusterName && clusterName != operatorClusterName {
		return operator(fmt.Sprintf("%s names cluster %q", corosyncConf, name)), nil
	}
	primitive, err := cibPrimitive(cib, operatorEtcdAgent)
	if err != nil || primitive == "" {
		return "", err
	}
	return operator(fmt.Sprintf("%s runs resource %q with ocf:heartbeat:%s", cib, primitive, operatorEtcdAgent)), nil
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
