package captest

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
)

// This file reads corpora nobody here wrote, for benchmarks of search: the
// Markdown files of folders such as the module cache's modules, split into
// sections.

// CorpusDirs returns the folders of a corpus, one per capability, and the
// folder that holds them: the subfolders of dir, or with dir empty the
// module cache's folders of the modules the go.sum file lists (see
// ModuleDirs), the cache found with `go env GOMODCACHE`.
func CorpusDirs(dir, gosum string) (root string, dirs []string, err error) {
	if dir != "" {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return "", nil, fmt.Errorf("read the corpus folder: %w", err)
		}
		for _, e := range entries {
			if e.IsDir() {
				dirs = append(dirs, filepath.Join(dir, e.Name()))
			}
		}
		return dir, dirs, nil
	}
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		return "", nil, fmt.Errorf("find the module cache: go env GOMODCACHE: %w", err)
	}
	cache := strings.TrimSpace(string(out))
	dirs, err = ModuleDirs(gosum, cache)
	return cache, dirs, err
}

// ModuleDirs returns the folders, sorted, of the modules the go.sum file
// lists (by the hash of their content, not only of their go.mod) that the
// module cache at cache holds.
func ModuleDirs(gosum, cache string) ([]string, error) {
	f, err := os.Open(gosum)
	if err != nil {
		return nil, fmt.Errorf("read the module's go.sum: %w", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 || strings.HasSuffix(fields[1], "/go.mod") {
			continue
		}
		dir := filepath.Join(cache, escapeModule(fields[0])+"@"+escapeModule(fields[1]))
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			out = append(out, dir)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), sc.Err()
}

// escapeModule applies the module cache's case encoding: "!" and the lower
// case letter for each upper case one.
func escapeModule(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsUpper(r) {
			b.WriteByte('!')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Section is one section of a Markdown file.
type Section struct {
	// File is the file's path relative to the folder it was read from,
	// with slashes and without ".md".
	File        string
	Title, Body string
}

// MarkdownSections returns the sections of the Markdown files below dir,
// files in sorted order (see Sections).
func MarkdownSections(dir string, level int) ([]Section, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	var out []Section
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(dir, f)
		for _, s := range Sections(string(data), level) {
			s.File = filepath.ToSlash(strings.TrimSuffix(rel, ".md"))
			out = append(out, s)
		}
	}
	return out, nil
}

// Sections splits Markdown at its headings of levels 2 to level ("## "
// for 2, "## " and "### " for 3); the text before the first one is a
// section too, when it holds anything. A section's title is its heading,
// or the document's "# " heading for the first.
func Sections(md string, level int) []Section {
	var out []Section
	var cur strings.Builder
	title := ""
	flush := func() {
		if body := cur.String(); strings.TrimSpace(body) != "" {
			out = append(out, Section{Title: title, Body: body})
		}
		cur.Reset()
	}
	for line := range strings.Lines(md) {
		if h, ok := heading(line, level); ok {
			flush()
			title = h
		} else if h, ok := strings.CutPrefix(line, "# "); ok && title == "" {
			title = strings.TrimSpace(h)
		}
		cur.WriteString(line)
	}
	flush()
	return out
}

// heading returns the text of a heading of levels 2 to level.
func heading(line string, level int) (string, bool) {
	for l := 2; l <= level; l++ {
		if h, ok := strings.CutPrefix(line, strings.Repeat("#", l)+" "); ok {
			return strings.TrimSpace(h), true
		}
	}
	return "", false
}

// WriteCorpus writes below root an omni/ folder with one capability per
// folder of dirs, named mod000, mod001, …, whose docs are the sections of
// its Markdown files (see MarkdownSections), at most maxDocs in all, and a
// config that enables them. It returns the docs' text, in order.
func WriteCorpus(root string, dirs []string, level, maxDocs int) ([]string, error) {
	var docs, enabled []string
	for i, dir := range dirs {
		if len(docs) >= maxDocs {
			break
		}
		secs, err := MarkdownSections(dir, level)
		if err != nil {
			return nil, err
		}
		secs = secs[:min(len(secs), maxDocs-len(docs))]
		if len(secs) == 0 {
			continue
		}
		id := fmt.Sprintf("mod%03d", i)
		capDir := filepath.Join(root, "omni", "capabilities", id)
		if err := os.MkdirAll(filepath.Join(capDir, "docs"), 0o755); err != nil {
			return nil, err
		}
		manifest := fmt.Sprintf("[capability]\nid = %q\nname = %q\nversion = \"1.0.0\"\ndescription = %q\n", id, filepath.Base(dir), "Documentation of "+filepath.Base(dir))
		if err := os.WriteFile(filepath.Join(capDir, "capability.toml"), []byte(manifest), 0o644); err != nil {
			return nil, err
		}
		for j, s := range secs {
			if err := os.WriteFile(filepath.Join(capDir, "docs", fmt.Sprintf("s%04d.md", j)), []byte(s.Body), 0o644); err != nil {
				return nil, err
			}
			docs = append(docs, s.Body)
		}
		enabled = append(enabled, fmt.Sprintf("%q", id))
	}
	config := "[capabilities]\nenable = [" + strings.Join(enabled, ", ") + "]\n"
	if err := os.WriteFile(filepath.Join(root, "omni", "config.toml"), []byte(config), 0o644); err != nil {
		return nil, err
	}
	return docs, nil
}

// Words returns the distinct words of text, lower-cased: its runs of ASCII
// letters.
func Words(text string) []string {
	seen := map[string]bool{}
	var out []string
	for w := range strings.FieldsFuncSeq(text, func(r rune) bool { return r > unicode.MaxASCII || !unicode.IsLetter(r) }) {
		w = strings.ToLower(w)
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// Typo returns w with one edit chosen by h: a deletion, a swap of two
// neighbours or a substitution, never of the first letter.
func Typo(w string, h uint64) string {
	b := []byte(w)
	pos := 1 + int(h>>8)%(len(b)-2)
	switch h % 3 {
	case 0:
		return string(slices.Delete(b, pos, pos+1))
	case 1:
		if b[pos] == b[pos+1] { // a swap would change nothing
			return string(slices.Delete(b, pos, pos+1))
		}
		b[pos], b[pos+1] = b[pos+1], b[pos]
	default:
		c := byte('a' + (h>>16)%26)
		if c == b[pos] {
			c = 'a' + (c-'a'+1)%26
		}
		b[pos] = c
	}
	return string(b)
}

// Hash is a stable hash of s, for picking words without randomness.
func Hash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}
