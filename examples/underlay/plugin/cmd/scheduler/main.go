// Command scheduler is kube-scheduler v1.36.3 with the UnderlayIPLimit plugin
// registered, built as cmd/kube-scheduler/scheduler.go does.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"example.com/acme/underlay/pkg/underlayiplimit"
)

func main() {
	command := app.NewSchedulerCommand(
		app.WithPlugin(underlayiplimit.Name, underlayiplimit.New),
	)
	os.Exit(cli.Run(command))
}
