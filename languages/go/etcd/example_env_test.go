package etcd_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/snowid/snowid/languages/go"
	"github.com/snowid/snowid/languages/go/etcd"
)

// A service configured the way snowidd and every other snowid library are:
// through SNOWID_* variables. FromEnv reads the process's own; OptionsFromEnv
// shows what they give, here from a map.
func ExampleOptionsFromEnv() {
	env := map[string]string{
		"SNOWID_ETCD_ENDPOINTS": "http://10.0.0.1:2379, http://10.0.0.2:2379",
		"SNOWID_ETCD_PREFIX":    "/ids",
		"SNOWID_REGION":         "2",
		"SNOWID_STATE_DIR":      "/var/lib/orders/snowid",
	}
	lookup := func(name string) (string, bool) { v, ok := env[name]; return v, ok }
	o, err := etcd.OptionsFromEnv(lookup, etcd.Options{Address: "orders-7:8080"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(o.Endpoints, o.Prefix, o.Region, o.Host == nil, o.StateDir, o.Address)

	// A missing setting is an invalid-argument error, never a default etcd.
	delete(env, "SNOWID_ETCD_ENDPOINTS")
	_, err = etcd.OptionsFromEnv(lookup, etcd.Options{})
	fmt.Println(errors.Is(err, snowid.ErrInvalidArgument), snowid.IsRetryable(err))
	// Output:
	// [http://10.0.0.1:2379 http://10.0.0.2:2379] /ids 2 true /var/lib/orders/snowid orders-7:8080
	// true false
}

// FromEnv is OptionsFromEnv on the process's environment followed by New.
func ExampleFromEnv() {
	ctx := context.Background()
	g, err := etcd.FromEnv(ctx, etcd.Options{})
	if err != nil {
		fmt.Println("no worker id:", err)
		return
	}
	defer g.Close(ctx)
	id, err := g.Next()
	if err != nil {
		fmt.Println("no id:", err)
		return
	}
	fmt.Println(id)
}
