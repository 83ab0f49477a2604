package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wikid/wikid/internal/auth"
	"github.com/wikid/wikid/internal/config"
	"github.com/wikid/wikid/internal/purge"
	"github.com/wikid/wikid/internal/store/backend"
	"github.com/wikid/wikid/internal/wiki"
)

// accountFlags are the flags of the user and token subcommands.
type accountFlags struct {
	admin  bool
	until  string
	reason string
	stdin  bool
	all    bool
}

const userUsage = "usage: wikid user add NAME [--admin] | list | set-groups NAME user|rollbacker|admin [--reason TEXT] | " +
	"block NAME [--until DURATION] [--reason TEXT] | unblock NAME [--reason TEXT] | reset-password NAME [--stdin]"

const tokenUsage = "usage: wikid token create NAME | list NAME | revoke ID | revoke --all NAME"

// resetLinkTTL is how long a reset link printed by the command line works.
const resetLinkTTL = 24 * time.Hour

func userCommand(ctx context.Context, cfg config.Config, sub string, args []string, f accountFlags, stdin io.Reader, stdout, stderr io.Writer) error {
	one := func() error {
		if len(args) != 1 {
			return errors.New(userUsage)
		}
		return nil
	}
	switch sub {
	case "add":
		if err := one(); err != nil {
			return err
		}
		return userAdd(ctx, cfg, args[0], f.admin, stdin, stdout, stderr)
	case "list":
		if len(args) != 0 {
			return errors.New(userUsage)
		}
		return withAccount(ctx, cfg, "", func(db backend.DB, _ wiki.User) error { return userList(ctx, db, stdout) })
	case "set-groups":
		if len(args) != 2 {
			return errors.New(userUsage)
		}
		g, err := parseGroups(args[1])
		if err != nil {
			return err
		}
		return withAccount(ctx, cfg, args[0], func(db backend.DB, u wiki.User) error {
			old, err := db.SetUserGroup(ctx, wiki.GroupChange{UserID: u.ID, Group: g, By: wiki.MaintenanceActor, Reason: wiki.OneLine(f.reason, 500), Time: time.Now()})
			if err != nil {
				return err
			}
			if old == g {
				fmt.Fprintf(stdout, "%s is already in the group %s; nothing changed\n", u.Name, g)
				return nil
			}
			accountChanged(ctx, db, u.ID, purge.LogTitle)
			fmt.Fprintf(stdout, "%s: group %s → %s\n", u.Name, old, g)
			return nil
		})
	case "block":
		if err := one(); err != nil {
			return err
		}
		now := time.Now()
		until := f.until
		if until == "" {
			until = "infinite"
		}
		expires, err := wiki.ParseExpiry(until, now)
		if err != nil {
			return fmt.Errorf("--until: %s", wiki.Message(err))
		}
		return withAccount(ctx, cfg, args[0], func(db backend.DB, u wiki.User) error {
			b := wiki.Block{UserID: u.ID, By: wiki.MaintenanceActor, Reason: wiki.OneLine(f.reason, 500), Created: now, Expires: expires}
			re, err := db.BlockUser(ctx, b)
			if err != nil {
				return err
			}
			accountChanged(ctx, db, u.ID, purge.LogTitle)
			verb := "blocked"
			if re {
				verb = "block changed:"
			}
			fmt.Fprintf(stdout, "%s %s until %s\n", verb, u.Name, b.ExpiryText())
			return nil
		})
	case "unblock":
		if err := one(); err != nil {
			return err
		}
		return withAccount(ctx, cfg, args[0], func(db backend.DB, u wiki.User) error {
			err := db.UnblockUser(ctx, u.ID, wiki.MaintenanceActor, wiki.OneLine(f.reason, 500), time.Now())
			if errors.Is(err, wiki.ErrNotFound) {
				return fmt.Errorf("%s is not blocked; nothing to lift", u.Name)
			}
			if err != nil {
				return err
			}
			accountChanged(ctx, db, u.ID, purge.LogTitle)
			fmt.Fprintf(stdout, "unblocked %s\n", u.Name)
			return nil
		})
	case "reset-password":
		if err := one(); err != nil {
			return err
		}
		return userResetPassword(ctx, cfg, args[0], f.stdin, stdin, stdout, stderr)
	}
	return errors.New(userUsage)
}

// accountChanged tells the running wikid processes on the database, through
// the purge log, that the account changed: they drop the sessions they
// hold for it, and the responses showing titles (Special:Log).
func accountChanged(ctx context.Context, db backend.DB, userID int64, titles ...wiki.Title) {
	purge.NewNode(purge.NodeOptions{Log: db}).AccountsChanged(ctx, []int64{userID}, titles...)
}

// parseGroups reads the groups argument. Wikid has one group per user, so
// the list must name exactly one of wiki.UserGroups.
func parseGroups(s string) (wiki.Group, error) {
	parts := strings.Split(s, ",")
	if len(parts) != 1 {
		return "", fmt.Errorf("groups %q: a user is in exactly one group here; give %s", s, wiki.UserGroupNames())
	}
	if g := wiki.Group(strings.TrimSpace(parts[0])); wiki.ValidUserGroup(g) {
		return g, nil
	}
	return "", fmt.Errorf("group %q does not exist; give %s", s, wiki.UserGroupNames())
}

// withAccount opens the store and finds the user named name (skipped when
// name is empty), then runs fn.
func withAccount(ctx context.Context, cfg config.Config, name string, fn func(backend.DB, wiki.User) error) error {
	db, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	var u wiki.User
	if name != "" {
		norm, err := auth.LookupUserName(name)
		if err != nil {
			return errors.New(wiki.Message(err))
		}
		u, err = db.FindUserByName(ctx, norm)
		if errors.Is(err, wiki.ErrNotFound) {
			return fmt.Errorf("there is no user %q; `wikid user list` lists them", norm)
		}
		if err != nil {
			return err
		}
	}
	return fn(db, u)
}

func userList(ctx context.Context, db backend.DB, stdout io.Writer) error {
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tGROUP\tCREATED\tBLOCKED UNTIL")
	now := time.Now()
	from := ""
	for {
		us, err := db.ListUsers(ctx, wiki.UserQuery{From: from, Limit: 501})
		if err != nil {
			return err
		}
		last := len(us)
		if last > 500 {
			last = 500
		}
		for _, u := range us[:last] {
			blocked := "-"
			if b, err := db.FindBlock(ctx, u.ID, now); err == nil {
				blocked = b.ExpiryText()
			} else if !errors.Is(err, wiki.ErrNotFound) {
				return err
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", u.ID, u.Name, u.Group, u.Created.Format(time.RFC3339), blocked)
		}
		if len(us) <= 500 {
			break
		}
		from = us[500].Name
	}
	return tw.Flush()
}

// userResetPassword prints a one-time link that lets the user choose a new
// password, or with --stdin sets the password read from standard input.
// Either way every session of the user ends.
func userResetPassword(ctx context.Context, cfg config.Config, name string, fromStdin bool, stdin io.Reader, stdout, stderr io.Writer) error {
	var hash string
	if fromStdin {
		password, err := readPassword(stdin, stderr)
		if err != nil {
			return err
		}
		if err := auth.ValidatePassword(password, password); err != nil {
			return errors.New(wiki.Message(err))
		}
		if hash, err = auth.HashPassword(password); err != nil {
			return err
		}
	}
	return withAccount(ctx, cfg, name, func(db backend.DB, u wiki.User) error {
		if fromStdin {
			if err := db.SetPassword(ctx, u.ID, hash, ""); err != nil {
				return err
			}
			accountChanged(ctx, db, u.ID)
			fmt.Fprintf(stdout, "password of %s set; all of its sessions were signed out\n", u.Name)
			return nil
		}
		secret := auth.NewSecret(32)
		now := time.Now()
		if err := db.CreatePasswordReset(ctx, wiki.PasswordReset{ID: auth.HashToken(secret), UserID: u.ID, Created: now, Expires: now.Add(resetLinkTTL)}); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "Give this link to %s; it works once, until %s (behind a proxy, use the wiki's public address):\n",
			u.Name, now.Add(resetLinkTTL).UTC().Format(time.RFC3339))
		fmt.Fprintf(stdout, "http://%s/wiki/Special:PasswordReset?token=%s\n", cfg.Addr, secret)
		return nil
	})
}

func tokenCommand(ctx context.Context, cfg config.Config, sub string, args []string, f accountFlags, stdout io.Writer) error {
	switch sub {
	case "create":
		if len(args) != 1 {
			return errors.New(tokenUsage)
		}
		return tokenCreate(ctx, cfg, args[0], stdout)
	case "list":
		if len(args) != 1 {
			return errors.New(tokenUsage)
		}
		return withAccount(ctx, cfg, args[0], func(db backend.DB, u wiki.User) error {
			ts, err := db.ListTokens(ctx, u.ID)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tCREATED\tEXPIRES\tLAST USED")
			for _, t := range ts {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.ID, t.Name, t.Created.Format(time.RFC3339), orNever(t.Expires), orNever(t.LastUsed))
			}
			return tw.Flush()
		})
	case "revoke":
		if f.all {
			if len(args) != 1 {
				return errors.New(tokenUsage)
			}
			return withAccount(ctx, cfg, args[0], func(db backend.DB, u wiki.User) error {
				n, err := db.DeleteUserTokens(ctx, u.ID)
				if err != nil {
					return err
				}
				accountChanged(ctx, db, u.ID) // the sessions api.php logins started with them end too
				fmt.Fprintf(stdout, "revoked %d tokens of %s\n", n, u.Name)
				return nil
			})
		}
		if len(args) != 1 {
			return errors.New(tokenUsage)
		}
		return withAccount(ctx, cfg, "", func(db backend.DB, _ wiki.User) error {
			id := strings.ToLower(strings.TrimSpace(args[0]))
			tok, err := db.FindToken(ctx, id)
			if err == nil {
				err = db.DeleteToken(ctx, id)
			}
			if errors.Is(err, wiki.ErrNotFound) {
				return fmt.Errorf("there is no token %q; `wikid token list NAME` shows the IDs", args[0])
			}
			if err != nil {
				return err
			}
			accountChanged(ctx, db, tok.UserID) // the sessions api.php logins started with it end too
			fmt.Fprintln(stdout, "revoked token", args[0])
			return nil
		})
	}
	return errors.New(tokenUsage)
}

func orNever(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.Format(time.RFC3339)
}
