package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnidev/omnidev/internal/capability"
)

// promptEntry is a skill offered as a prompt.
type promptEntry struct {
	prompt *mcp.Prompt
	cap    *capability.Capability
	skill  *capability.Skill
}

func newPromptEntry(c *capability.Capability, s *capability.Skill) *promptEntry {
	p := &mcp.Prompt{
		Name:        promptName(c.ID, s.Name),
		Title:       s.Title,
		Description: s.Description,
	}
	for _, a := range s.Arguments {
		p.Arguments = append(p.Arguments, &mcp.PromptArgument{
			Name:        a.Name,
			Title:       a.Title,
			Description: a.Description,
			Required:    a.Required,
		})
	}
	return &promptEntry{prompt: p, cap: c, skill: s}
}

// promptName is "<capability>-<skill>", the skill's name lowercased with
// anything but letters, digits, _ and - turned into "-": hosts build
// commands from it (Claude Code: /mcp__omnidev__<name>), so it must be one
// word, and stay the same as long as the skill's name does.
func promptName(capID, skill string) string {
	var b strings.Builder
	b.WriteString(capID)
	dash := true // a "-" was just written (after the capability id, below)
	b.WriteByte('-')
	for _, r := range strings.ToLower(skill) {
		if 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '_' {
			b.WriteRune(r)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// getPrompt answers prompts/get: the skill's body, its arguments filled in,
// as one user message after a line that says which module to import.
func (c *catalog) getPrompt(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	st := c.cur.Load()
	p := st.prompts[req.Params.Name]
	if p == nil {
		return nil, st.unknownPrompt(req.Params.Name)
	}
	body, err := p.skill.Expand(req.Params.Arguments)
	if errors.Is(err, capability.ErrSkillArguments) {
		return nil, invalidParams("prompt %q: %v", p.prompt.Name, err)
	}
	if err != nil {
		return nil, err
	}
	return &mcp.GetPromptResult{
		Description: p.skill.Description,
		Messages: []*mcp.PromptMessage{{
			Role:    "user",
			Content: &mcp.TextContent{Text: promptHeader(p.cap, p.skill) + "\n\n" + strings.TrimLeft(body, "\r\n")},
		}},
	}, nil
}

// promptHeader tells the agent where the skill comes from and what to
// import to follow it.
func promptHeader(c *capability.Capability, s *capability.Skill) string {
	if c.Entry == "" {
		return fmt.Sprintf("Skill %q of the %s capability (omnidev).", s.Name, c.ID)
	}
	return fmt.Sprintf("Skill %q of the %s capability: in programs run with omni_execute, import its functions from %q.", s.Name, c.ID, c.Module)
}

// unknownPrompt is the error for a prompt name the catalog does not hold.
func (st *catalogState) unknownPrompt(name string) error {
	if len(st.prompts) == 0 {
		return invalidParams("unknown prompt %q: no enabled capability has a skill; add skills/<name>/SKILL.md to a capability", name)
	}
	names := make([]string, 0, len(st.prompts))
	for n := range st.prompts {
		names = append(names, n)
	}
	slices.Sort(names)
	const most = 20
	list := strings.Join(names[:min(len(names), most)], ", ")
	if len(names) > most {
		list += fmt.Sprintf(" and %d more (see prompts/list)", len(names)-most)
	}
	return invalidParams("unknown prompt %q: prompt names are <capability>-<skill>, such as %s", name, list)
}
