package topology

import (
	"errors"
	"fmt"
)

// Two children follow the MAIN: the PodDisruptionBudget <cluster>-main (budgets.go) and the
// Service <cluster>-rw (services.go). Both select the MAIN's pod by LabelPodName and both are
// rendered from the one pod the hook knows to be MAIN (RenderMain), so the pass that hands MAIN
// over, or observes a failover, moves both at once; <cluster>-data follows the MAIN's budget one
// pass later (budgets.go says why).

// RenderMain shapes DesiredChildren's output for a cluster whose MAIN runs in mainPod and whose
// observed MAIN's budget selects heldPod ("" for either when there is none): RenderMainBudget and,
// with a MAIN, RenderWriteService.
func RenderMain(c *Cluster, children []map[string]any, mainPod, heldPod string) ([]map[string]any, error) {
	children, err := RenderMainBudget(c, children, mainPod, heldPod)
	if err != nil || mainPod == "" {
		return children, err
	}
	if err := RenderWriteService(c, children, mainPod); err != nil {
		return nil, err
	}
	return children, nil
}

// RenderWriteService points the Service <cluster>-rw among children at mainPod, which must be
// one of the cluster's data pods, <cluster>-data-<ordinal>. It replaces the child in place.
func RenderWriteService(c *Cluster, children []map[string]any, mainPod string) error {
	if c == nil || c.mc == nil {
		return errors.New("no admitted MemgraphCluster to render")
	}
	mc := c.mc
	if _, ok := PodOrdinal(DataSetName(mc.Name), mainPod); !ok {
		return fmt.Errorf("the MAIN's pod %q is not a data pod of cluster %s (%s-<ordinal>)",
			Clip(mainPod), mc.Name, DataSetName(mc.Name))
	}
	rw, err := toStoredForm(writeService(mc, mainPod))
	if err != nil {
		return err
	}
	for i, child := range children {
		meta, _ := child["metadata"].(map[string]any)
		if child["kind"] == "Service" && meta["name"] == WriteServiceName(mc.Name) {
			children[i] = rw
			return nil
		}
	}
	return fmt.Errorf("no Service %s among the children to point at the MAIN", WriteServiceName(mc.Name))
}
