package query

import (
	"log/slog"
	"testing"

	"github.com/omnidev/omnidev/internal/capability"
)

// fixture returns a registry of a few capabilities on distinct topics,
// written so that each ranking case has one right answer.
func fixture() *capability.Registry {
	return &capability.Registry{
		Root:    "/repo",
		Profile: "default",
		Capabilities: []*capability.Capability{
			{
				ID: "database", Name: "Database", Module: "db",
				Description: "Run schema migrations and inspect tables of the local database",
				Types:       "export function migrate(target?: string): Promise<void>;\nexport function tables(): Promise<string[]>;\n",
				Docs: []capability.Doc{
					{Name: "definition", Title: "Database", Body: "# Database\n\nMigrations live in db/migrations. Each migration has an up and a down step.\n"},
					{Name: "guide/rollback-migration", Title: "Undo a migration", Body: "# Undo a migration\n\nCall migrate with the previous version to step down. Never edit a migration that already ran in production.\n"},
				},
				Rules: []capability.Doc{
					{Name: "naming", Title: "Migration names", Body: "# Migration names\n\nName migrations with a timestamp prefix and a verb: 20240101_add_users.\n"},
				},
			},
			{
				ID: "deploy", Name: "Deploy", Module: "deploy",
				Description: "Ship builds to staging and production",
				Types:       "export function deploy(env: 'staging' | 'production'): Promise<string>;\nexport function rollback(id: string): Promise<void>;\n",
				Docs: []capability.Doc{
					{Name: "definition", Title: "Deploy", Body: "# Deploy\n\nDeployments go to staging first. A deployment to production needs a green build.\n"},
					{Name: "rollback", Title: "Rolling back", Body: "# Rolling back\n\nTo rollback a deployment, call rollback with the deployment id. The previous build is restored within a minute.\n"},
					{Name: "history", Title: "Deployment history", Body: "# Deployment history\n\nEvery deployment is recorded. A rollback is recorded too, as a deployment of an older build.\n"},
				},
			},
			{
				ID: "review", Name: "Code Review", Module: "review",
				Description: "Review pull requests against the house style",
				Skills: []capability.Skill{
					{Name: "review-pr", Description: "Review a pull request and leave comments", Body: "Read the diff, run the linters, comment on naming and error handling."},
				},
				Docs: []capability.Doc{
					// A long doc that mentions triage many times in its body:
					// the skill named triage must still come first.
					{Name: "checklist", Title: "Review checklist", Body: "# Review checklist\n\nBefore review, triage the comments: triage nits, triage blockers, triage questions. " +
						"A reviewer who does not triage spends the afternoon on nits. Check tests, check names, check errors, check docs.\n"},
				},
			},
			{
				ID: "search", Name: "Code Search", Module: "search",
				Description: "Search the repository with ripgrep and find symbols",
				Types:       "export function grep(pattern: string): Promise<Match[]>;\nexport function findSymbol(name: string): Promise<Symbol[]>;\n",
				Skills: []capability.Skill{
					{Name: "find-symbol", Description: "Find where a function or type is defined", Body: "Use findSymbol before grep: it knows about definitions and imports."},
				},
				Docs: []capability.Doc{
					{Name: "definition", Title: "Code Search", Body: "# Code Search\n\nFast regular expression search over the worktree, respecting .gitignore.\n"},
				},
			},
			{
				ID: "tasks", Name: "Tasks", Module: "tasks",
				Description: "Track tasks in .omni/state/tasks.json",
				Types:       "export interface Task { id: string; title: string; done: boolean }\nexport function addTask(title: string): Task;\nexport function listTasks(): Task[];\n",
				Skills: []capability.Skill{
					{Name: "triage", Description: "Sort incoming tasks by priority", Body: "Look at every open task, give it a priority from P0 to P3 and close duplicates."},
				},
				Docs: []capability.Doc{
					{Name: "definition", Title: "Tasks", Body: "# Tasks\n\nA task has an id, a title and a done flag. Use addTask to create one and listTasks to see them.\n"},
					{Name: "guide/setup", Title: "Setting up tasks", Body: "# Setting up tasks\n\nSet TASKS_FILE to move the state file. The file is created on first use.\n"},
				},
				Rules: []capability.Doc{
					{Name: "naming", Title: "Task titles", Body: "# Task titles\n\nStart a task title with a verb. We track work, not topics.\n"},
				},
			},
		},
	}
}

// disabledCapability is a capability of the fixture's repository that is not
// enabled: it is never in a Registry's Capabilities, so it must never be found.
func disabledCapability() *capability.Capability {
	return &capability.Capability{
		ID: "secrets", Name: "Secrets", Module: "secrets",
		Description: "Read secrets from the vault",
		Types:       "export function vaultRead(path: string): Promise<string>;\n",
		Docs:        []capability.Doc{{Name: "definition", Title: "Secrets", Body: "# Secrets\n\nThe vault holds every credential.\n"}},
	}
}

// openFixture opens an index of reg in a fresh folder, closed at the end of
// the test.
func openFixture(t testing.TB, reg *capability.Registry) *Index {
	t.Helper()
	x, err := Open(t.Context(), t.TempDir(), reg, Options{Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := x.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return x
}

// testLogger sends the index's logs to the test log.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(p))
	return len(p), nil
}
