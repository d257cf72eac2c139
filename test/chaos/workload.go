package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Keys are the workload's keys: few, so clients contend on each.
var Keys = func() []string {
	keys := make([]string, 8)
	for i := range keys {
		keys[i] = fmt.Sprintf("chaos/k%d", i)
	}
	return keys
}()

// Workload runs concurrent clients that put, read (linearizable gets) and compare-and-set the
// keys, each operation within a deadline, and records every operation in a history.
type Workload struct {
	History *History
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// Init writes InitialValue to every key through cli: the state the model starts from.
func Init(ctx context.Context, cli *clientv3.Client) error {
	for _, k := range Keys {
		if _, err := cli.Put(ctx, k, InitialValue); err != nil {
			return fmt.Errorf("writing %s: %w", k, err)
		}
	}
	return nil
}

// StartWorkload starts one client per etcd client in clients; seed draws their operations.
// Each operation may take up to deadline; a client pauses pause between its operations.
func StartWorkload(clients []*clientv3.Client, seed uint64, deadline, pause time.Duration) *Workload {
	ctx, cancel := context.WithCancel(context.Background())
	w := &Workload{History: NewHistory(), cancel: cancel}
	for id, cli := range clients {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(id)))
			last := map[string]string{} // the value this client last saw or wrote, per key
			for seq := 0; ctx.Err() == nil; seq++ {
				in := Input{Key: Keys[r.IntN(len(Keys))]}
				switch n := r.IntN(10); {
				case n < 4:
					in.Op, in.Value = Put, fmt.Sprintf("%d.%d", id, seq)
				case n < 8:
					in.Op = Get
				default:
					in.Op, in.Value, in.Expect = CAS, fmt.Sprintf("%d.%d", id, seq), InitialValue
					if v, ok := last[in.Key]; ok {
						in.Expect = v
					}
				}
				op := Op{Client: id, In: in, Call: w.History.Now()}
				octx, ocancel := context.WithTimeout(ctx, deadline)
				op.Out = do(octx, cli, in)
				ocancel()
				op.Return = w.History.Now()
				w.History.Add(op)
				switch {
				case op.Out.Unknown:
				case in.Op == Get, in.Op == CAS && !op.Out.OK:
					last[in.Key] = op.Out.Value
				default:
					last[in.Key] = in.Value
				}
				select {
				case <-ctx.Done():
				case <-time.After(pause):
				}
			}
		}()
	}
	return w
}

// Stop ends the clients and waits for their last operations.
func (w *Workload) Stop() []Op {
	w.cancel()
	w.wg.Wait()
	return w.History.Ops()
}

// do runs one operation; any error leaves its outcome unknown.
func do(ctx context.Context, cli *clientv3.Client, in Input) Output {
	switch in.Op {
	case Get:
		resp, err := cli.Get(ctx, in.Key)
		if err != nil {
			return Output{Unknown: true, Err: err.Error()}
		}
		if len(resp.Kvs) == 0 {
			return Output{}
		}
		return Output{Value: string(resp.Kvs[0].Value)}
	case Put:
		if _, err := cli.Put(ctx, in.Key, in.Value); err != nil {
			return Output{Unknown: true, Err: err.Error()}
		}
		return Output{}
	default:
		resp, err := cli.Txn(ctx).
			If(clientv3.Compare(clientv3.Value(in.Key), "=", in.Expect)).
			Then(clientv3.OpPut(in.Key, in.Value)).
			Else(clientv3.OpGet(in.Key)).Commit()
		if err != nil {
			return Output{Unknown: true, Err: err.Error()}
		}
		if resp.Succeeded {
			return Output{OK: true}
		}
		out := Output{}
		if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
			out.Value = string(kvs[0].Value)
		}
		return out
	}
}
