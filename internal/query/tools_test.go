package query

import (
	"strings"
	"testing"

	"github.com/omnidev/omnidev/internal/capability"
)

// wrappedFixture adds to fixture() a capability that wraps an MCP server
// with tools, and one whose server could not start.
func wrappedFixture() *capability.Registry {
	reg := fixture()
	weather := (&capability.Capability{
		ID: "weather", Name: "Weather", Module: "weather", Description: "Forecasts from a wrapped MCP server",
		MCP: &capability.MCPServer{Transport: capability.TransportStdio, Command: "weather-server"},
	}).WithTools([]capability.Tool{
		{Name: "get-forecast", Title: "Forecast", Description: "Forecast for a city",
			InputSchema: []byte(`{"type":"object","properties":{"city":{"type":"string","description":"Name of the city, e.g. Reykjavik"},"days":{"type":"integer"}}}`)},
		{Name: "get_alerts", Description: "Severe weather alerts", InputSchema: []byte(`{"type":"object"}`)},
	}, "")
	broken := (&capability.Capability{
		ID: "zbroken", Module: "zbroken",
		MCP: &capability.MCPServer{Transport: capability.TransportStdio, Command: "/no/such/server"},
	}).WithTools(nil, "start MCP server /no/such/server: no such file")
	reg.Capabilities = append(reg.Capabilities, weather, broken)
	return reg
}

func TestSearchTools(t *testing.T) {
	x := openFixture(t, wrappedFixture())
	tests := []struct {
		name   string
		query  string
		kinds  []string
		source string // the first hit
	}{
		{name: "by description", query: "severe alerts", kinds: []string{KindTool}, source: "tool:weather/get_alerts"},
		{name: "by parameter description", query: "reykjavik", source: "tool:weather/get-forecast"},
		{name: "by function name", query: "getForecast", source: "tool:weather/get-forecast"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := x.Search(t.Context(), Request{Query: tt.query, Kinds: tt.kinds})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Results) == 0 || res.Results[0].Source != tt.source {
				t.Fatalf("hits %+v, want %s first", res.Results, tt.source)
			}
			h := res.Results[0]
			if h.Kind != KindTool || h.Capability != "weather" {
				t.Errorf("hit %+v, want kind tool of capability weather", h)
			}
			for _, r := range res.Results {
				if len(tt.kinds) > 0 && r.Kind != KindTool {
					t.Errorf("hit %s of kind %s with kinds = [tool]", r.Source, r.Kind)
				}
			}
		})
	}

	res, err := x.Search(t.Context(), Request{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range res.Summary {
		switch {
		case s.Tools == nil:
			got[s.ID] = "-"
		case s.Error != "":
			got[s.ID] = s.Error
		default:
			got[s.ID] = strings.Repeat("t", *s.Tools)
		}
	}
	if got["weather"] != "tt" || !strings.Contains(got["zbroken"], "/no/such/server") || got["tasks"] != "-" {
		t.Errorf("summary tools/error %v; want 2 tools for weather, the error for zbroken, nothing for tasks", got)
	}
}
