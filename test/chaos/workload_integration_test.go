//go:build integration

package chaos

import (
	"context"
	"net"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/tnf-layer/tnf-layer/internal/testutil/testbin"
)

// freePort is a loopback port nothing listens on right now.
func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startEtcd runs a real etcd member of one on loopback; the test stops it by its PID.
func startEtcd(t *testing.T) (*exec.Cmd, string) {
	client, peer := "http://"+freePort(t), "http://"+freePort(t)
	dir := t.TempDir()
	cmd := exec.Command(testbin.Etcd(t), "--name", "m", "--data-dir", filepath.Join(dir, "data"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer, "--initial-cluster", "m="+peer)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd, client
}

// TestWorkloadOnEtcd: the workload on a real etcd, frozen (SIGSTOP) for two seconds midway (about
// four operations per client time out meanwhile, and are recorded unknown): the history is
// linearizable, and a read made stale in the recorded history is caught.
func TestWorkloadOnEtcd(t *testing.T) {
	cmd, endpoint := startEtcd(t)
	var clients []*clientv3.Client
	for range 3 {
		cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cli.Close() })
		clients = append(clients, cli)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// A fresh member takes a moment to serve: Init's first put waits for it.
	var err error
	for i := 0; i < 50; i++ {
		if err = Init(ctx, clients[0]); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	w := StartWorkload(clients, 7, 500*time.Millisecond, 5*time.Millisecond)
	time.Sleep(time.Second)
	_ = cmd.Process.Signal(syscall.SIGSTOP)
	time.Sleep(2 * time.Second)
	_ = cmd.Process.Signal(syscall.SIGCONT)
	time.Sleep(time.Second)
	ops := w.Stop()

	kinds := map[string]int{}
	for _, op := range ops {
		kinds[string(op.In.Op)]++
		switch {
		case op.Out.Unknown && op.In.Op != Get:
			kinds["write unknown"]++
		case op.In.Op == CAS && !op.Out.OK:
			kinds["cas refused"]++
		}
	}
	for _, want := range []string{"put", "get", "cas", "cas refused", "write unknown"} {
		if kinds[want] == 0 {
			t.Errorf("no operation %q in the history: %v", want, kinds)
		}
	}
	if res, _ := Check(ops, time.Minute); res != porcupine.Ok {
		t.Fatalf("the history of a single etcd is %s", res)
	}
	// The last acknowledged put of a key, then a later read of it made to see the initial value.
	stale := append([]Op(nil), ops...)
	for i := len(stale) - 1; i >= 0; i-- {
		if stale[i].In.Op == Put && stale[i].Acknowledged() {
			stale = append(stale, Op{Client: 9, In: Input{Op: Get, Key: stale[i].In.Key}, Out: Output{Value: InitialValue},
				Call: stale[i].Return + 1, Return: stale[i].Return + 2})
			break
		}
	}
	if res, _ := Check(stale, time.Minute); res != porcupine.Illegal {
		t.Fatalf("a stale read in the history: %s, want illegal", res)
	}
	t.Logf("%d operations: %v", len(ops), kinds)
}
