package ocf

import (
	"reflect"
	"testing"
	"time"
)

func TestNotify(t *testing.T) {
	env := MapEnv(map[string]string{
		"OCF_RESKEY_CRM_meta_notify_type":             "post",
		"OCF_RESKEY_CRM_meta_notify_operation":        "stop",
		"OCF_RESKEY_CRM_meta_notify_stop_uname":       "node2 ",
		"OCF_RESKEY_CRM_meta_notify_master_uname":     "node1",
		"OCF_RESKEY_CRM_meta_notify_unpromoted_uname": "",
		"OCF_RESKEY_CRM_meta_notify_slave_uname":      "node3",
	})
	n := env.Notify()
	want := Notification{Type: "post", Operation: "stop", Stop: []string{"node2"}, Promoted: []string{"node1"}, Unpromoted: []string{"node3"}}
	if !reflect.DeepEqual(n, want) {
		t.Fatalf("got %+v", n)
	}
	if !Contains(n.Stop, "node2") || Contains(n.Stop, "node1") {
		t.Fatal("Contains")
	}
}

func TestTimeout(t *testing.T) {
	if got := MapEnv(map[string]string{"OCF_RESKEY_CRM_meta_timeout": "90000"}).Timeout(time.Second); got != 90*time.Second {
		t.Fatal(got)
	}
	if got := MapEnv(nil).Timeout(time.Second); got != time.Second {
		t.Fatal(got)
	}
}
