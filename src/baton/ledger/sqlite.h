// Thin RAII wrappers over SQLite's C API: a connection and a prepared statement. Every
// failing call throws SqliteError with the statement and SQLite's message.
// Thread-safety: a Database and its Statements belong to one thread at a time.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

namespace baton {

class SqliteError : public std::runtime_error {
 public:
  explicit SqliteError(const std::string& what, int code = SQLITE_ERROR)
      : std::runtime_error(what), code_(code) {}
  // SQLite's primary result code: SQLITE_NOTADB for a file that is not a database.
  int code() const noexcept { return code_; }

 private:
  int code_;
};

class Database {
 public:
  enum class Mode { create, read_only };
  // Opens the database file at `path`, creating it if needed unless `read_only`.
  explicit Database(const std::filesystem::path& path, Mode mode = Mode::create);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Runs one or more statements that return no rows.
  void exec(std::string_view sql);
  sqlite3* handle() const { return db_; }
  std::int64_t last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }
  // PRAGMA user_version: the schema version a ledger writes there (0 for a new file).
  std::int64_t user_version();

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

class Statement {
 public:
  Statement(Database& db, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are numbered from 1, as in SQLite.
  Statement& bind(int index, double value);
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, std::string_view value);
  Statement& bind_null(int index);
  // Steps once: true while a row is available.
  bool step();
  // Runs a statement that returns no rows, then resets it for the next use.
  void run();
  void reset();

  double column_double(int index) const { return sqlite3_column_double(stmt_, index); }
  std::int64_t column_int(int index) const { return sqlite3_column_int64(stmt_, index); }
  std::string column_text(int index) const;
  bool column_is_null(int index) const { return sqlite3_column_type(stmt_, index) == SQLITE_NULL; }

 private:
  void check(int rc, const char* what) const;

  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
};

}  // namespace baton
