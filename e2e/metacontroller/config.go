// Package metacontroller is test equipment: a small driver that plays Metacontroller v4.17's
// documented part for one CompositeController read from the repository's manifests (one driver
// per CompositeController; several run side by side), against a
// real API server. It finds parents, claims owned children (adopting matching orphans), asks the
// customize hook for related objects, POSTs the v2 sync request to a hook URL the test chooses,
// applies the returned children with Metacontroller's client-side 3-way merge, deletes owned
// children that were not returned, writes status through the status subresource, and requeues on
// resyncAfterSeconds and resyncPeriodSeconds, and plays the finalize hook: the finalizer
// metacontroller.io/compositecontroller-<name> on every parent, the finalize hook instead of
// the sync hook once the parent is being deleted, the finalizer removed once it answers
// finalized; and a DecoratorController of one resource (Decorator), whose answers label the
// objects. It counts every write it makes so tests can assert
// that a converged cluster costs nothing. It never ships.
package metacontroller

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Update methods of childResources[].updateStrategy.method.
const (
	MethodOnDelete        = "OnDelete"
	MethodRecreate        = "Recreate"
	MethodInPlace         = "InPlace"
	MethodRollingRecreate = "RollingRecreate"
	MethodRollingInPlace  = "RollingInPlace"
)

// CompositeController is the part of a CompositeController spec this driver honours, plus the
// whole object as read (sent to hooks as "controller").
type CompositeController struct {
	Name                string
	Parent              Resource
	ParentSelector      map[string]string // parentResource.labelSelector.matchLabels
	IgnoreStatusChanges bool
	Children            []ChildResource
	ResyncPeriod        time.Duration // 0: none
	GenerateSelector    bool
	Sync, Customize     *Hook
	Finalize            *Hook
	EndpointConfigs     []EndpointConfig
	Object              map[string]any
	Source              string // file it was read from
}

// Resource is an apiVersion and plural resource name.
type Resource struct {
	APIVersion string
	Resource   string
}

// GroupVersionResource of the resource.
func (r Resource) GroupVersionResource() (schema.GroupVersionResource, error) {
	gv, err := schema.ParseGroupVersion(r.APIVersion)
	if err != nil {
		return schema.GroupVersionResource{}, err
	}
	return gv.WithResource(r.Resource), nil
}

// ChildResource is one childResources entry.
type ChildResource struct {
	Resource
	Method string // default OnDelete
}

// Hook is a webhook: the URL Metacontroller would call, the connection settings set on the hook
// itself (nil or empty: spec.endpointConfigs decide), the wire version, the timeout and the
// response decoding mode.
type Hook struct {
	URL      string
	Endpoint *EndpointConfig
	Version  string // v1 or v2
	Timeout  time.Duration
	Strict   bool
}

type rawCC struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		ParentResource struct {
			APIVersion          string `json:"apiVersion"`
			Resource            string `json:"resource"`
			IgnoreStatusChanges *bool  `json:"ignoreStatusChanges"`
			LabelSelector       *struct {
				MatchLabels      map[string]string `json:"matchLabels"`
				MatchExpressions []any             `json:"matchExpressions"`
			} `json:"labelSelector"`
		} `json:"parentResource"`
		ChildResources []struct {
			APIVersion     string `json:"apiVersion"`
			Resource       string `json:"resource"`
			UpdateStrategy *struct {
				Method string `json:"method"`
			} `json:"updateStrategy"`
		} `json:"childResources"`
		ResyncPeriodSeconds *int32           `json:"resyncPeriodSeconds"`
		GenerateSelector    *bool            `json:"generateSelector"`
		EndpointConfigs     []EndpointConfig `json:"endpointConfigs"`
		Hooks               *struct {
			Sync      *rawHook `json:"sync"`
			Customize *rawHook `json:"customize"`
			Finalize  *rawHook `json:"finalize"`
		} `json:"hooks"`
	} `json:"spec"`
}

type rawHook struct {
	Version string      `json:"version"`
	Webhook *rawWebhook `json:"webhook"`
}

type rawWebhook struct {
	URL                    *string `json:"url"`
	Path                   *string `json:"path"`
	Timeout                *string `json:"timeout"`
	ResponseUnMarshallMode *string `json:"responseUnMarshallMode"`
	Service                *struct {
		Name      string  `json:"name"`
		Namespace string  `json:"namespace"`
		Port      *int32  `json:"port"`
		Protocol  *string `json:"protocol"`
	} `json:"service"`
	EndpointConfig `json:",inline"`
}

// LoadCompositeController finds the CompositeController called name among the YAML files under
// dir (recursively) and parses it.
func LoadCompositeController(dir, name string) (*CompositeController, error) {
	all, err := LoadCompositeControllers(dir)
	if err != nil {
		return nil, err
	}
	for _, cc := range all {
		if cc.Name == name {
			return cc, nil
		}
	}
	return nil, fmt.Errorf("no CompositeController %s in %s", name, dir)
}

// LoadCompositeControllers parses every CompositeController among the YAML files under dir
// (recursively), in file and document order; a driver plays one each.
func LoadCompositeControllers(dir string) ([]*CompositeController, error) {
	var found []*CompositeController
	err := walkDocuments(dir, "CompositeController", func(path string, doc []byte) error {
		cc, err := ParseCompositeController(doc)
		if err == nil {
			cc.Source = path
			found = append(found, cc)
		}
		return err
	})
	if err == nil && len(found) == 0 {
		err = fmt.Errorf("no CompositeController in %s", dir)
	}
	return found, err
}

// walkDocuments calls parse with each YAML document of kind among the files under dir
// (recursively), in file and document order; an error names the file.
func walkDocuments(dir, kind string, parse func(path string, doc []byte) error) error {
	return filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			return err
		}
		docs, err := yamlDocuments(path)
		if err != nil {
			return err
		}
		for _, doc := range docs {
			var probe struct {
				Kind string `json:"kind"`
			}
			if yaml.Unmarshal(doc, &probe) != nil || probe.Kind != kind {
				continue
			}
			if err := parse(path, doc); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
		}
		return nil
	})
}

func yamlDocuments(path string) ([][]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(doc)) > 0 {
			docs = append(docs, doc)
		}
	}
}

// unmarshalDocument decodes doc into raw, the fields a driver reads, and returns the whole
// object as well (sent to hooks as "controller").
func unmarshalDocument(doc []byte, raw any) (map[string]any, error) {
	if err := yaml.Unmarshal(doc, raw); err != nil {
		return nil, err
	}
	var obj map[string]any
	if err := yaml.Unmarshal(doc, &obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// ParseCompositeController parses one CompositeController document (YAML or JSON).
func ParseCompositeController(doc []byte) (*CompositeController, error) {
	var raw rawCC
	obj, err := unmarshalDocument(doc, &raw)
	if err != nil {
		return nil, err
	}
	s := raw.Spec
	cc := &CompositeController{
		Name:                raw.Metadata.Name,
		Parent:              Resource{APIVersion: s.ParentResource.APIVersion, Resource: s.ParentResource.Resource},
		IgnoreStatusChanges: s.ParentResource.IgnoreStatusChanges != nil && *s.ParentResource.IgnoreStatusChanges,
		GenerateSelector:    s.GenerateSelector != nil && *s.GenerateSelector,
		EndpointConfigs:     s.EndpointConfigs,
		Object:              obj,
	}
	if cc.Parent.APIVersion == "" || cc.Parent.Resource == "" {
		return nil, errors.New("spec.parentResource needs apiVersion and resource")
	}
	if ls := s.ParentResource.LabelSelector; ls != nil {
		if len(ls.MatchExpressions) > 0 {
			return nil, errors.New("parentResource.labelSelector.matchExpressions is not supported by the e2e driver")
		}
		cc.ParentSelector = ls.MatchLabels
	}
	for _, c := range s.ChildResources {
		method := MethodOnDelete
		if c.UpdateStrategy != nil && c.UpdateStrategy.Method != "" {
			method = c.UpdateStrategy.Method
		}
		cc.Children = append(cc.Children, ChildResource{Resource: Resource{APIVersion: c.APIVersion, Resource: c.Resource}, Method: method})
	}
	if p := s.ResyncPeriodSeconds; p != nil {
		cc.ResyncPeriod = max(time.Duration(*p)*time.Second, time.Second)
	}
	if s.Hooks == nil {
		return nil, errors.New("no hooks defined")
	}
	if cc.Sync, err = parseHook("sync", s.Hooks.Sync); err != nil {
		return nil, err
	}
	if cc.Sync == nil {
		return nil, errors.New("hooks.sync is not defined")
	}
	if cc.Customize, err = parseHook("customize", s.Hooks.Customize); err != nil {
		return nil, err
	}
	if cc.Finalize, err = parseHook("finalize", s.Hooks.Finalize); err != nil {
		return nil, err
	}
	return cc, nil
}

func parseHook(name string, h *rawHook) (*Hook, error) {
	if h == nil {
		return nil, nil
	}
	if h.Webhook == nil {
		return nil, fmt.Errorf("hooks.%s has no webhook", name)
	}
	w := h.Webhook
	out := &Hook{Version: h.Version, Timeout: 10 * time.Second, Endpoint: &w.EndpointConfig}
	if out.Version == "" {
		out.Version = "v1" // the CRD default
	}
	u, err := webhookURL(w)
	if err != nil {
		return nil, fmt.Errorf("hooks.%s: %w", name, err)
	}
	if _, err := url.Parse(u); err != nil {
		return nil, fmt.Errorf("hooks.%s.webhook: %w", name, err)
	}
	out.URL = u
	if w.Timeout != nil {
		d, err := time.ParseDuration(*w.Timeout)
		if err != nil {
			return nil, fmt.Errorf("hooks.%s.webhook.timeout: %w", name, err)
		}
		if d > 0 {
			out.Timeout = d
		}
	}
	// Strict decoding is the default for v2 hooks, loose for v1.
	out.Strict = out.Version == "v2"
	if m := w.ResponseUnMarshallMode; m != nil {
		out.Strict = *m == "strict"
	}
	return out, nil
}
