// Package kubedata fills etcd with data shaped as kube-apiserver leaves it, for the benchmarks
// that measure what the size of a database costs:
//   - keys in kube-apiserver's layout, /kubernetes.io/<resource>/<namespace>/<name>, over the
//     resources a cluster holds most of;
//   - values of random bytes: etcd stores and streams them as they are, without compression, so
//     random bytes cost what protobuf objects of the same size cost;
//   - most objects small (0.5 to 16 KiB, log-uniform: pods, config maps, secrets, leases), and
//     a tenth of the bytes in large objects (128 KiB to 1 MiB: CRDs, config maps of bundles),
//     under etcd's request limit;
//   - each object written in a request of its own, as kube-apiserver writes, so that etcd's log
//     and its memory (the entries since its last snapshot) hold what they hold in a cluster;
//   - history: after every batch of new objects, earlier small objects are written again
//     (status updates: a quarter as many as the batch's small ones), then the keyspace is
//     compacted to the revision before those updates, as kube-apiserver compacts every five
//     minutes and leaves the last interval's revisions; never defragmented, so the file keeps the
//     free pages compaction left, as it does between the operator's defragmentations.
package kubedata

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"golang.org/x/sync/errgroup"
)

// Shape is what a fill wrote and left.
type Shape struct {
	Objects  int   // objects created
	Writes   int   // writes, updates included
	DbSize   int64 // bytes of etcd's database file at the end
	InUse    int64 // of those, in use
	Revision int64
	Took     time.Duration
}

var smallResources = []string{"pods", "configmaps", "secrets", "leases", "events", "replicasets", "endpointslices", "serviceaccounts"}

const (
	batchBytes  = 128 << 20 // new objects between two looks at the database's size
	largeShare  = 0.1       // of the bytes written, in large objects
	updateShare = 0.25      // earlier small objects written again per small object of a batch
	writers     = 16        // requests at once
	maxRounds   = 1000

	smallMin, largeMin, largeMax = 512, 128 << 10, 1 << 20
	// largeChance makes large objects carry largeShare of the bytes, from the two sizes' means
	// (log-uniform 0.5 to 16 KiB: 15.5 KiB / ln 32; uniform 128 KiB to 1 MiB).
	smallMean   = (32*smallMin - smallMin) / 3.4657359
	largeMean   = (largeMin + largeMax) / 2
	largeChance = largeShare * smallMean / (largeMean*(1-largeShare) + largeShare*smallMean)
)

// object is one key and the size of its value.
type object struct {
	key  string
	size int
}

// Fill writes the shape through cli until the database file of the member at endpoint holds
// target bytes; it ends past them by up to one round (128 MiB of new objects and their updates).
// The same target draws the same objects in the same order.
func Fill(ctx context.Context, cli *clientv3.Client, endpoint string, target int64) (Shape, error) {
	began := time.Now()
	rng := rand.New(rand.NewPCG(uint64(target), 44))
	payload := make([]byte, largeMax+16<<10)
	for i := range payload {
		payload[i] = byte(rng.Uint32())
	}
	// A value is a window of one random buffer: which bytes does not matter, their count does.
	value := func(size int) string {
		off := rng.IntN(len(payload) - size)
		return string(payload[off : off+size])
	}
	var s Shape
	var small []object
	for round := 0; ; round++ {
		st, err := cli.Status(ctx, endpoint)
		if err != nil {
			return s, fmt.Errorf("status of %s: %w", endpoint, err)
		}
		if st.DbSize >= target {
			s.DbSize, s.InUse, s.Revision = st.DbSize, st.DbSizeInUse, st.Header.Revision
			break
		}
		if round == maxRounds {
			return s, fmt.Errorf("%d rounds did not fill %s's database to %d bytes (at %d)", round, endpoint, target, st.DbSize)
		}
		var batch []object
		smallBefore := len(small)
		for written := 0; written < batchBytes; {
			o := newObject(rng, round, len(batch))
			if o.size < largeMin {
				small = append(small, o)
			}
			batch = append(batch, o)
			written += o.size
		}
		if err := putAll(ctx, cli, batch, value); err != nil {
			return s, err
		}
		st, err = cli.Status(ctx, endpoint)
		if err != nil {
			return s, fmt.Errorf("status of %s: %w", endpoint, err)
		}
		compactAt := st.Header.Revision
		var again []object
		picked := map[int]bool{}
		for range int(float64(len(small)-smallBefore) * updateShare) {
			if i := rng.IntN(len(small)); !picked[i] {
				picked[i] = true
				again = append(again, small[i])
			}
		}
		if err := putAll(ctx, cli, again, value); err != nil {
			return s, err
		}
		s.Objects += len(batch)
		s.Writes += len(batch) + len(again)
		if _, err := cli.Compact(ctx, compactAt); err != nil {
			return s, fmt.Errorf("compacting at revision %d: %w", compactAt, err)
		}
	}
	s.Took = time.Since(began)
	return s, nil
}

// newObject draws the n-th object of a round: its key and its size.
func newObject(rng *rand.Rand, round, n int) object {
	if rng.Float64() < largeChance {
		size := largeMin + rng.IntN(largeMax-largeMin)
		if rng.IntN(2) == 0 {
			return object{fmt.Sprintf("/kubernetes.io/apiextensions.k8s.io/customresourcedefinitions/crd%d-%d.example.com", round, n), size}
		}
		return object{fmt.Sprintf("/kubernetes.io/configmaps/ns-%03d/bundle-%d-%d", rng.IntN(200), round, n), size}
	}
	res := smallResources[rng.IntN(len(smallResources))]
	// log-uniform from smallMin to 32 × smallMin
	size := int(smallMin * math.Exp2(5*rng.Float64()))
	return object{fmt.Sprintf("/kubernetes.io/%s/ns-%03d/%s-%d-%d", res, rng.IntN(200), res, round, n), size}
}

// putAll writes each object in a request of its own, writers at once.
func putAll(ctx context.Context, cli *clientv3.Client, objects []object, value func(int) string) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(writers)
	for _, o := range objects {
		v := value(o.size)
		g.Go(func() error {
			ctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			if _, err := cli.Put(ctx, o.key, v); err != nil {
				return fmt.Errorf("writing %s: %w", o.key, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// DefaultSizes are the database sizes (GiB) the benchmarks measure unless told otherwise.
const DefaultSizes = "0.5 1 2 4"

// SizeName is a size's sub-benchmark name, "0.5GiB": test/benchtable reads the size back from it.
func SizeName(gib float64) string { return strconv.FormatFloat(gib, 'f', -1, 64) + "GiB" }

// Sizes reads a list of sizes in GiB (TNF_BENCH_DATA_GIB; empty: DefaultSizes), each above 0
// and under OpenShift's 8 GiB quota.
func Sizes(spec string) ([]float64, error) {
	if spec == "" {
		spec = DefaultSizes
	}
	var sizes []float64
	for _, f := range strings.Fields(spec) {
		gib, err := strconv.ParseFloat(f, 64)
		if err != nil || gib <= 0 || gib > 7 {
			return nil, fmt.Errorf("TNF_BENCH_DATA_GIB: %q is not a size in GiB above 0 and under the 8 GiB quota", f)
		}
		sizes = append(sizes, gib)
	}
	return sizes, nil
}
