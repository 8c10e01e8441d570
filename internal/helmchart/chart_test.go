package helmchart

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plexus-mcp/plexus/internal/testenv"
)

// The tools and the schemas, pinned. They are built and fetched from the
// Go module proxy by `go run MODULE@VERSION` and `go mod download`, not
// added to the project's go.mod; nothing is downloaded from elsewhere.
// The schemas come from the Kubernetes OpenAPI document that
// k8s.io/cli-runtime ships (artifacts/openapi/swagger.json, the types of
// Kubernetes 1.24: every field the chart uses, and policy/v1), the module
// helm itself is built with.
const (
	helmPkg        = "helm.sh/helm/v4/cmd/helm@v4.3.2"
	kubeconformPkg = "github.com/yannh/kubeconform/cmd/kubeconform@v0.8.0"
	specModule     = "k8s.io/cli-runtime@v0.37.2"
	specFile       = "artifacts/openapi/swagger.json"
)

func chartDir() string { return filepath.Join(testenv.RepoRoot(), "deploy", "helm", "plexus") }

// goRun runs the go command in dir, outside the module (so that go.mod is
// not read or changed), and returns its stdout and stderr.
func goRun(dir string, args ...string) (string, string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// schemas writes the strict schemas of every kind into a new directory and
// returns kubeconform's -schema-location for it.
func schemas(t *testing.T, work string) string {
	t.Helper()
	var mod struct{ Dir string }
	out, stderr, err := goRun(work, "mod", "download", "-json", specModule)
	if err == nil {
		err = json.Unmarshal([]byte(out), &mod)
	}
	if err != nil || mod.Dir == "" {
		t.Fatalf("go mod download %s: %v\n%s", specModule, err, stderr)
	}
	dir := t.TempDir()
	n, err := WriteSchemas(filepath.Join(mod.Dir, specFile), dir)
	if err != nil {
		t.Fatal(err)
	}
	if n < 50 {
		t.Fatalf("%d schemas from %s, want every kind of the API", n, specModule)
	}
	return filepath.Join(dir, "{{.ResourceKind}}{{.KindSuffix}}.json")
}

// render is helm template of chart with the values in set.
func render(t *testing.T, work, chart string, set ...string) (string, error) {
	t.Helper()
	args := []string{"run", helmPkg, "template", "plexus", chart}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	out, stderr, err := goRun(work, args...)
	if err != nil {
		return stderr, err
	}
	return out, nil
}

// validate runs kubeconform -strict on the manifests and returns its
// report.
func validate(t *testing.T, work, location, manifests string) (string, error) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "rendered.yaml")
	if err := os.WriteFile(f, []byte(manifests), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := goRun(work, "run", kubeconformPkg, "-strict", "-summary", "-schema-location", location, f)
	return out + stderr, err
}

func storeKey() string {
	k := make([]byte, 32)
	rand.Read(k)
	return base64.StdEncoding.EncodeToString(k)
}

// TestChartRendersAndValidates: the chart renders with its defaults and a
// key, and with an existing Secret, an old key of a rotation and no peer
// channel; every manifest is valid against the Kubernetes schemas, with
// unknown fields refused; the resources a replica needs are there; bad
// values are refused; and helm lint --strict passes.
func TestChartRendersAndValidates(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the chart does not change under the race detector")
	}
	work := t.TempDir()
	location := schemas(t, work)
	for _, c := range []struct {
		set        []string
		want, gone []string
	}{
		{[]string{"store.key.value=" + storeKey()},
			[]string{"kind: NetworkPolicy", `prometheus.io/scrape: "true"`, "--metrics-listen=$(POD_IP):9090", "--stop-delay=5s", "name: PLEXUS_STORE_KEY"},
			[]string{"kind: HorizontalPodAutoscaler", "kind: ConfigMap", "--store-bootstrap"}},
		{[]string{"store.key.existingSecret=team-key", "store.oldKey.existingSecret=team-key-old", "peer.enabled=false", "replicaCount=3",
			"autoscaling.enabled=true", "metrics.enabled=false", "networkPolicy.enabled=false", "stopDelaySeconds=0",
			"settings.team.resource=https://mcp.example.com/mcp", "settings.team.issuers[0]=https://idp.example.com", "settings.mcp.retryMs=3000"},
			[]string{"kind: HorizontalPodAutoscaler", "kind: ConfigMap", "--store-bootstrap=/etc/plexus/settings/extensions.json", `"resource": "https://mcp.example.com/mcp"`},
			[]string{"kind: NetworkPolicy", "prometheus.io/scrape", "--metrics-listen", "--stop-delay", "replicas: 3"}},
	} {
		set := c.set
		out, err := render(t, work, chartDir(), set...)
		if err != nil {
			t.Fatalf("helm template %v: %v\n%s", set, err, out)
		}
		for _, want := range append([]string{"kind: Deployment", "kind: Service", "kind: PodDisruptionBudget", "path: /readyz", "path: /healthz",
			"--listen=$(POD_IP):7780", "fieldPath: status.podIP", "readOnlyRootFilesystem: true", "runAsNonRoot: true", "name: PLEXUS_STORE_URL"}, c.want...) {
			if !strings.Contains(out, want) {
				t.Errorf("helm template %v: no %q", set, want)
			}
		}
		// The store's URL and key are never on the command line, nor the
		// key in a file the stdio servers (the same user) could read.
		for _, gone := range append([]string{"--store=", "--store-key-file", "$(PLEXUS_STORE_URL)", "$(PLEXUS_STORE_KEY)"}, c.gone...) {
			if strings.Contains(out, gone) {
				t.Errorf("helm template %v: %q is there", set, gone)
			}
		}
		if report, err := validate(t, work, location, out); err != nil || !strings.Contains(report, "Invalid: 0, Errors: 0") {
			t.Errorf("kubeconform %v: %v\n%s", set, err, report)
		}
	}
	// A key is required, and values are checked (values.schema.json): the
	// chart refuses to render without a key, with a misspelt value or one
	// of the wrong type.
	for _, c := range []struct {
		set  []string
		want string
	}{
		{nil, "store.key"},
		{[]string{"store.key.value=k", "replicaCont=3"}, "replicaCont"},
		{[]string{"store.key.value=k", "port=web"}, "/port"},
	} {
		if out, err := render(t, work, chartDir(), c.set...); err == nil || !strings.Contains(out, c.want) {
			t.Errorf("helm template %v: %v\n%s", c.set, err, out)
		}
	}
	if out, stderr, err := goRun(work, "run", helmPkg, "lint", "--strict", chartDir(), "--set", "store.key.value=k"); err != nil {
		t.Errorf("helm lint --strict: %v\n%s%s", err, out, stderr)
	}
}

// TestBrokenManifestsAreRefused holds the check to account: a manifest
// with a field of the wrong type, or one Kubernetes does not know, is
// invalid.
func TestBrokenManifestsAreRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the chart does not change under the race detector")
	}
	work := t.TempDir()
	location := schemas(t, work)
	good, err := render(t, work, chartDir(), "store.key.value="+storeKey())
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, good)
	}
	for _, c := range []struct{ name, from, to string }{
		{"a port that is not a number", "containerPort: 7780", "containerPort: seven"},
		{"an unknown field", "readOnlyRootFilesystem: true", "readOnlyRootFilesystem: true\n            readOnlyRootFileSystem: true"},
		{"a probe without its handler's fields", "path: /readyz", "paht: /readyz"},
	} {
		bad := strings.Replace(good, c.from, c.to, 1)
		if bad == good {
			t.Fatalf("%s: %q not in the rendered chart", c.name, c.from)
		}
		if report, err := validate(t, work, location, bad); err == nil {
			t.Errorf("%s: kubeconform passed it:\n%s", c.name, report)
		}
	}
}
