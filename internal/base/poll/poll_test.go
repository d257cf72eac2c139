package poll

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestEvery(t *testing.T) {
	t.Run("done on the third look", func(t *testing.T) {
		n := 0
		err := Every(context.Background(), time.Millisecond, func(context.Context) (bool, error) {
			n++
			return n == 3, nil
		})
		if err != nil || n != 3 {
			t.Fatalf("%d looks, %v", n, err)
		}
	})
	t.Run("a failed check ends it", func(t *testing.T) {
		broken := errors.New("broken")
		n := 0
		err := Every(context.Background(), time.Millisecond, func(context.Context) (bool, error) {
			n++
			return false, broken
		})
		if !errors.Is(err, broken) || n != 1 {
			t.Fatalf("%d looks, %v", n, err)
		}
	})
	t.Run("ends with its context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		n := 0
		err := Every(ctx, time.Millisecond, func(context.Context) (bool, error) {
			if n++; n == 2 {
				cancel()
			}
			return false, nil
		})
		if !errors.Is(err, context.Canceled) || n != 2 {
			t.Fatalf("%d looks, %v", n, err)
		}
	})
	t.Run("an ended context still gets its first look", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		n := 0
		err := Every(ctx, time.Millisecond, func(context.Context) (bool, error) {
			n++
			return n == 1, nil
		})
		if err != nil || n != 1 {
			t.Fatalf("%d looks, %v", n, err)
		}
		err = Every(ctx, time.Millisecond, func(context.Context) (bool, error) { return false, nil })
		if !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
	})
}
