package sqlstore

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
)

//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrations embed.FS

// Migrate brings the schema up to date with goose, from the migrations of
// the engine embedded in the binary. Several processes may migrate one
// database at once: they take turns (see lockMigrations), and whoever comes
// second finds nothing left to do.
func (db *DB) Migrate(ctx context.Context) error {
	fsys, err := fs.Sub(migrations, "migrations/"+db.d.name())
	if err != nil {
		return fmt.Errorf("sqlstore: migrate: %w", err)
	}
	unlock, err := db.lockMigrations(ctx)
	if err != nil {
		return fmt.Errorf("sqlstore: migrate: %w", err)
	}
	defer unlock()
	p, err := goose.NewProvider(db.d.goose(), db.db, fsys, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return fmt.Errorf("sqlstore: migrate: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("sqlstore: migrate %s: %w", db.d.name(), err)
	}
	return nil
}

// lockMigrations waits until no other process or goroutine migrates the
// database and keeps them out until unlock is called (dialect.lockMigrations):
//   - PostgreSQL: a session advisory lock, held on a connection set aside;
//   - SQLite: an exclusive flock of the file PATH-migrate.lock.
//
// Both are released by the system if the process dies. The lock is taken
// around the whole of goose's work, not with goose's session locker: goose
// creates its version table before taking that lock, and a migrator that
// loses that race sleeps a second before it retries.
func (db *DB) lockMigrations(ctx context.Context) (unlock func(), err error) {
	return db.d.lockMigrations(ctx, db)
}
