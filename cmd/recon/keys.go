package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"recon/sqlstore"
)

// envSecretKey holds the sealing keys themselves (not a file name). It is
// read from the environment only: a key on the command line would show in
// the process list.
const envSecretKey = "RECON_SECRET_KEY"

// secretKeySource says where the keys that seal secrets are, the same way
// for recon serve and every command that opens the database
// (docs/design.md, D9): --secret-key-file (or RECON_SECRET_KEY_FILE), else
// RECON_SECRET_KEY, else, for SQLite only, the file PATH.key beside the
// database file. A PostgreSQL database has no default: every node must be
// given the same key.
func (a *app) secretKeySource(db *sqlstore.DB) (sqlstore.KeySource, error) {
	keys := a.getenv(envSecretKey)
	switch {
	case a.secretKeyFile != "" && keys != "":
		return sqlstore.KeySource{}, fmt.Errorf("both --secret-key-file and %s are set: give the secret key one way", envSecretKey)
	case a.secretKeyFile != "":
		return sqlstore.KeySource{File: a.secretKeyFile}, nil
	case keys != "":
		return sqlstore.KeySource{Keys: keys}, nil
	case db.DefaultKeyFile() != "":
		return sqlstore.KeySource{File: db.DefaultKeyFile()}, nil
	}
	return sqlstore.KeySource{}, fmt.Errorf("a PostgreSQL database needs its secret key given explicitly, the same on every node: --secret-key-file PATH (env RECON_SECRET_KEY_FILE) or %s (the key itself, e.g. from `openssl rand -base64 32`); a key file that does not exist yet is created on a new database", envSecretKey)
}

// useSecretKey loads the sealing keys of db (see secretKeySource).
func (a *app) useSecretKey(ctx context.Context, db *sqlstore.DB) error {
	src, err := a.secretKeySource(db)
	if err != nil {
		return err
	}
	if err := db.UseSecretKey(ctx, src); err != nil {
		return fmt.Errorf("secret key: %w", describe(err))
	}
	return nil
}

func newKeysCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "The key that seals merchant, IPN and signing secrets",
		Long: `Secrets the server must read back (merchant secret keys, IPN secrets, signing
secrets) are encrypted in the database under a key that is not stored there:
--secret-key-file, or RECON_SECRET_KEY holding the key itself. With SQLite and
neither given, the key file is recon.db.key beside the database file, created
(mode 0600) on first start. PostgreSQL needs one or the other on every node.
Back the key file up apart from the database: without it the secrets are lost.`,
	}
	rotate := &cobra.Command{
		Use:   "rotate",
		Short: "Replace the key and re-seal every secret under the new one",
		Long: `Generate a new key, add it to the key file, re-seal every secret under it in one
database transaction, then drop the old key from the file. A crash at any point
leaves every secret readable with the key file; run the command again to finish.

Servers using the same key file follow on their own. Nodes with their own copy
of the file, or given RECON_SECRET_KEY, need the new file's content: copy it to
them (they cannot read secrets sealed under the new key until then).`,
		Example: `  recon keys rotate
  recon keys rotate --database-url postgres://recon@db/recon --secret-key-file /etc/recon/secret.key`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withStore(cmd.Context(), func(db *sqlstore.DB) error {
				src, err := a.secretKeySource(db)
				if err != nil {
					return err
				}
				rot, err := db.RotateSecretKey(cmd.Context(), src)
				if err != nil {
					return err
				}
				return a.print(map[string]any{"old_key_id": rot.OldKeyID, "new_key_id": rot.NewKeyID, "resealed": rot.Resealed, "key_file": src.File},
					"key %d replaced key %d in %s; %d secrets re-sealed", rot.NewKeyID, rot.OldKeyID, src.File, rot.Resealed)
			})
		},
	}
	a.addJSONFlag(rotate)
	cmd.AddCommand(rotate)
	return cmd
}
