package chaos

import (
	"fmt"
	"math"
	"time"

	"github.com/anishathalye/porcupine"
)

// InitialValue is what every key of the workload holds before the history begins.
const InitialValue = "init"

// Model is a register per key: porcupine checks each key's operations on their own, which is
// exact for single-key operations. Every operation that reads reveals the value it saw (a get;
// a CAS that held revealed Expect; a CAS that did not hold reads the value in its else branch),
// so Prepare may drop unknown writes nobody saw.
var Model = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string]int{}
		var parts [][]porcupine.Operation
		for _, op := range history {
			key := op.Input.(Input).Key
			i, ok := byKey[key]
			if !ok {
				i = len(parts)
				byKey[key] = i
				parts = append(parts, nil)
			}
			parts[i] = append(parts[i], op)
		}
		return parts
	},
	Init: func() any { return InitialValue },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.(string), input.(Input), output.(Output)
		switch in.Op {
		case Get:
			return out.Value == s, s
		case Put:
			return true, in.Value
		case CAS:
			switch {
			case out.Unknown && s == in.Expect:
				return true, in.Value
			case out.Unknown:
				return true, s
			case out.OK:
				return s == in.Expect, in.Value
			default:
				return s != in.Expect && s == out.Value, s
			}
		}
		return false, s
	},
	DescribeOperation: func(input, output any) string { return describe(input.(Input), output.(Output)) },
	DescribeState:     func(state any) string { return fmt.Sprintf("%q", state) },
}

func describe(in Input, out Output) string {
	var s string
	switch in.Op {
	case Get:
		s = fmt.Sprintf("get(%s)", in.Key)
	case Put:
		s = fmt.Sprintf("put(%s, %q)", in.Key, in.Value)
	case CAS:
		s = fmt.Sprintf("cas(%s, %q → %q)", in.Key, in.Expect, in.Value)
	}
	switch {
	case out.Unknown:
		return s + " → unknown"
	case in.Op == Get:
		return fmt.Sprintf("%s → %q", s, out.Value)
	case in.Op == CAS && !out.OK:
		return fmt.Sprintf("%s → no, holds %q", s, out.Value)
	}
	return s + " → ok"
}

// Prepare turns the recorded operations into porcupine's. A read that failed is dropped: it
// changed and told nothing. A write whose outcome is unknown and whose value no operation ever
// saw is dropped: taking effect after every other operation is always a valid place for it,
// and there it changes nothing anyone saw. Any other unknown write returns at infinity: it may
// have taken effect at any time after its call.
func Prepare(ops []Op) []porcupine.Operation {
	seen := map[string]bool{}
	for _, op := range ops {
		switch {
		case op.Out.Unknown:
		case op.In.Op == Get, op.In.Op == CAS && !op.Out.OK:
			seen[op.In.Key+"\x00"+op.Out.Value] = true
		case op.In.Op == CAS:
			seen[op.In.Key+"\x00"+op.In.Expect] = true
		}
	}
	var out []porcupine.Operation
	for _, op := range ops {
		ret := op.Return
		if op.Out.Unknown {
			if op.In.Op == Get || !seen[op.In.Key+"\x00"+op.In.Value] {
				continue
			}
			ret = math.MaxInt64
		}
		out = append(out, porcupine.Operation{ClientId: op.Client, Input: op.In, Call: op.Call, Output: op.Out, Return: ret})
	}
	return out
}

// Check decides whether the history is linearizable, within timeout (porcupine.Unknown when it
// could not decide in time); the info draws the history for porcupine's visualization.
func Check(ops []Op, timeout time.Duration) (porcupine.CheckResult, porcupine.LinearizationInfo) {
	return porcupine.CheckOperationsVerbose(Model, Prepare(ops), timeout)
}

// Visualize writes porcupine's HTML view of a checked history to path.
func Visualize(info porcupine.LinearizationInfo, path string) error {
	return porcupine.VisualizePath(Model, info, path)
}
