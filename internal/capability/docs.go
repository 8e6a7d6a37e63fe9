package capability

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// skillFile is the file that makes a folder under skills/ a skill.
const skillFile = "SKILL.md"

// docs returns definition.md first, then docs/**/*.md sorted by name.
func (l *capLoader) docs() []Doc {
	var docs []Doc
	if d, ok := l.doc("definition.md", DefinitionDoc); ok {
		docs = append(docs, d)
	}
	var more []Doc
	// The walk function never fails, so neither does the walk.
	_ = fs.WalkDir(l.fsys, "docs", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			if p != "docs" || !errors.Is(err, fs.ErrNotExist) {
				l.fileProblem(p, err)
			}
			return nil
		case l.budget < 0:
			return fs.SkipAll
		case p != "docs" && strings.HasPrefix(d.Name(), "."):
			// Editors and tools keep hidden files next to docs; they are not docs.
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		case d.IsDir() || !strings.HasSuffix(p, ".md"):
			return nil
		}
		name := strings.TrimSuffix(strings.TrimPrefix(p, "docs/"), ".md")
		if name == DefinitionDoc {
			// Definition() finds the main doc by this name, so only definition.md may have it.
			l.problem(p, `the doc name "definition" is reserved for definition.md; rename this file`)
			return nil
		}
		if doc, ok := l.doc(p, name); ok {
			more = append(more, doc)
		}
		return nil
	})
	return append(docs, sortDocs(more)...)
}

// rules returns rules/*.md sorted by name.
func (l *capLoader) rules() []Doc {
	var rules []Doc
	for _, e := range l.readDir("rules") {
		n := e.Name()
		if e.IsDir() || strings.HasPrefix(n, ".") || !strings.HasSuffix(n, ".md") {
			continue
		}
		if doc, ok := l.doc("rules/"+n, strings.TrimSuffix(n, ".md")); ok {
			rules = append(rules, doc)
		}
	}
	return sortDocs(rules)
}

// doc reads a Markdown file. A missing file is no problem: definition.md is
// optional, and the other callers only ask for files they have listed.
func (l *capLoader) doc(rel, name string) (Doc, bool) {
	data, err := l.read(rel)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			l.fileProblem(rel, err)
		}
		return Doc{}, false
	}
	body := string(data)
	return Doc{
		Name:  name,
		Title: markdownTitle(body, path.Base(name)),
		Body:  body,
		Path:  l.rel + "/" + rel,
	}, true
}

// readDir lists dir; a missing dir is empty, and any other failure a problem.
func (l *capLoader) readDir(dir string) []fs.DirEntry {
	entries, err := fs.ReadDir(l.fsys, dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		l.fileProblem(dir, err)
	}
	return entries
}

// skills returns skills/<folder>/SKILL.md sorted by name. When two skills
// share a name, the one in the folder that sorts later is reported and left out.
func (l *capLoader) skills() []Skill {
	var skills []Skill
	firstPath := make(map[string]string) // skill name -> path of the skill that has it
	for _, e := range l.readDir("skills") {
		if strings.HasPrefix(e.Name(), ".") || !(e.IsDir() || e.Type()&fs.ModeSymlink != 0) {
			continue
		}
		s, ok := l.skill("skills/" + e.Name())
		if !ok {
			continue
		}
		if first, dup := firstPath[s.Name]; dup {
			l.problem(strings.TrimPrefix(s.Path, l.rel+"/"), fmt.Sprintf("skill name %q is already used by %s; rename one of them", s.Name, first))
			continue
		}
		firstPath[s.Name] = s.Path
		skills = append(skills, s)
	}
	slices.SortFunc(skills, func(a, b Skill) int { return strings.Compare(a.Name, b.Name) })
	return skills
}

// skill reads dir/SKILL.md; false means the skill is reported and left out.
func (l *capLoader) skill(dir string) (Skill, bool) {
	rel := dir + "/" + skillFile
	data, err := l.read(rel)
	if errors.Is(err, fs.ErrNotExist) {
		l.problem(dir, "no "+skillFile+"; add one with name and description frontmatter, or remove the folder")
		return Skill{}, false
	}
	if err != nil {
		l.fileProblem(rel, err)
		return Skill{}, false
	}
	text := string(data)
	fm, start, err := parseFrontmatter(text)
	if err != nil {
		l.problem(rel, err.Error())
		return Skill{}, false
	}
	if fm.fields == nil {
		l.problem(rel, "no frontmatter; start the file with a --- block holding name and description")
		return Skill{}, false
	}
	name, errName := fm.text("name")
	desc, errDesc := fm.text("description")
	title, errTitle := fm.text("title")
	if err := cmp.Or(errName, errDesc, errTitle); err != nil {
		l.problem(rel, err.Error())
		return Skill{}, false
	}
	name, desc = strings.TrimSpace(name), strings.TrimSpace(desc)
	var missing []string
	if name == "" {
		missing = append(missing, "name")
	}
	if desc == "" {
		missing = append(missing, "description")
	}
	if len(missing) > 0 {
		l.problem(rel, fmt.Sprintf("frontmatter has no %s; add it between the --- lines", strings.Join(missing, " and no ")))
		return Skill{}, false
	}
	args, err := skillArguments(fm)
	if err != nil {
		l.problem(rel, err.Error())
		return Skill{}, false
	}
	body := text[start:]
	if len(args) == 0 && strings.Contains(body, argumentsVar) {
		args = []SkillArgument{implicitArgument}
	}
	return Skill{
		Name:        name,
		Description: desc,
		Body:        body,
		Path:        l.rel + "/" + rel,
		Title:       cmp.Or(strings.TrimSpace(title), markdownTitle(body, name)),
		Text:        text,
		Arguments:   args,
	}, true
}

func sortDocs(docs []Doc) []Doc {
	slices.SortFunc(docs, func(a, b Doc) int { return strings.Compare(a.Name, b.Name) })
	return docs
}
